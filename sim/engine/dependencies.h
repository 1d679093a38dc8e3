#pragma once
// The dependency rules of docs/schedule-rules.md §2, in one place for every replay path:
//   F(s, j) after F(s-1, j)                    (an activation: crosses devices)
//   B(s, j) after F(s, j), B(s+1, j), R(s, j), L(s, j)   (B(s+1, j): a gradient, crosses devices)
//   W(s, j) after B(s, j); R(s, j) and O(s, j) after F(s, j); L(s, j) after O(s, j)
// A fused F&B has the dependencies of both halves. Only the activation and the gradient edge can
// join two devices (every other edge stays within one (stage, microbatch), which one device
// holds); their size is the p2p bytes of the lower of the two stages.

#include <cstdint>

#include "schedules/op.h"

namespace bubblesim {

enum class DependencyKind : std::uint8_t { Local, Activation, Gradient };

/// Calls sink(kind, stage, microbatch, dependency) for each producer of one half (F, B, W, R, O,
/// L) of an op of a table with `stages` stages. The producer may be absent from the table.
template <typename Sink>
void for_each_producer(OpKind kind, std::int32_t s, std::int32_t j, std::int32_t stages,
                       Sink&& sink) {
  switch (kind) {
    case OpKind::Forward:
      if (s > 0) sink(OpKind::Forward, s - 1, j, DependencyKind::Activation);
      break;
    case OpKind::Backward:
      sink(OpKind::Forward, s, j, DependencyKind::Local);
      if (s + 1 < stages) sink(OpKind::Backward, s + 1, j, DependencyKind::Gradient);
      sink(OpKind::Recompute, s, j, DependencyKind::Local);
      sink(OpKind::Reload, s, j, DependencyKind::Local);
      break;
    case OpKind::Weight:
      sink(OpKind::Backward, s, j, DependencyKind::Local);
      break;
    case OpKind::Recompute:
    case OpKind::Offload:
      sink(OpKind::Forward, s, j, DependencyKind::Local);
      break;
    case OpKind::Reload:
      sink(OpKind::Offload, s, j, DependencyKind::Local);
      break;
    case OpKind::ForwardBackward:
      break;  // a fused op: use the overload for whole ops
  }
}

/// The same for a whole op (both halves of a fused F&B, forward half first).
template <typename Sink>
void for_each_producer(const Op& op, std::int32_t stages, Sink&& sink) {
  if (op.kind == OpKind::ForwardBackward) {
    for_each_producer(OpKind::Forward, op.stage, op.microbatch, stages, sink);
    for_each_producer(OpKind::Backward, op.backward_stage, op.backward_microbatch, stages, sink);
  } else {
    for_each_producer(op.kind, op.stage, op.microbatch, stages, sink);
  }
}

/// The stage whose p2p bytes a cross-device dependency carries, from its producer's stage: the
/// lower of the two stages (an activation leaves stage s for s+1, a gradient stage s for s-1).
inline std::int32_t transfer_stage(DependencyKind kind, std::int32_t producer_stage) {
  return kind == DependencyKind::Activation ? producer_stage : producer_stage - 1;
}

}  // namespace bubblesim
