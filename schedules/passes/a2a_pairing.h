#pragma once
// `parallelism.a2a_overlap` (docs/moe.md): Megatron-LM's combined 1F1B overlap of the expert
// all-to-all. In the steady state a device runs a backward and then the next microbatch's
// forward; Megatron runs the two as one overlapped step, each one's dispatch and combine under
// the other's compute. This pass makes each such pair one F&B op (OpKind::ForwardBackward, the
// op DualPipe's overlapped chunks are), so the replay prices it as DualPipe's fused op
// (fused_forward_backward in schedules/stage_costs.h) and every op left alone, the warm-up
// forwards and the cool-down backwards, pays its all-to-all exposed.

#include <cstdint>
#include <vector>

#include "schedules/table.h"

namespace bubblesim {

struct PairingResult {
  Table table;
  std::vector<std::int64_t> pairs_per_device;  // F&B ops made
  std::int64_t candidates = 0;                 // B ops directly followed by an F
  std::int64_t refused = 0;                    // left apart: fusing them would deadlock
};

/// Fuses every B (a backward, not an F&B) that is directly followed on its device by an F into
/// one F&B op of that F and that B, in the B's place. A pair whose fusion would make the table
/// deadlock (the F waits, through other devices, for the B) is left apart, checked by executing
/// the table's dependencies (schedules/list_scheduling.h: F after the previous stage's F, B after
/// its own F and the next stage's B, W after its B). A table that already has F&B ops, or that
/// stalls where no pair is, is returned unchanged.
PairingResult pair_backward_forward(const Table& table);

}  // namespace bubblesim
