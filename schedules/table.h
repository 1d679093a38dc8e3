#pragma once
// Table: a pipeline schedule as data. Per device, the ordered list of ops it executes, plus the
// placement of every stage on a device.
//
// Stages are global (0..stages-1). A table with `chunks` v > 1 splits each of the p-way pipeline
// stages of the cost profile into v consecutive table stages (interleaved, V shapes), so table
// stage s covers the model slice of cost-profile stage s / v. Weight-replicating schedules
// (Chimera, DualPipe) have several replicas: each replica maps every stage to a device, and each
// microbatch runs through exactly one replica.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/op.h"

namespace bubblesim {

struct Placement {
  /// device_of_stage[replica][stage] -> device.
  std::vector<std::vector<std::int32_t>> device_of_stage;
  /// replica_of_microbatch[j] -> replica; empty means every microbatch uses replica 0.
  std::vector<std::int32_t> replica_of_microbatch;

  std::int32_t replica_of(std::int32_t microbatch) const {
    return replica_of_microbatch.empty()
               ? 0
               : replica_of_microbatch[static_cast<std::size_t>(microbatch)];
  }
  std::int32_t device_of(std::int32_t stage, std::int32_t microbatch) const {
    return device_of_stage[static_cast<std::size_t>(replica_of(microbatch))]
                          [static_cast<std::size_t>(stage)];
  }
  std::int32_t replicas() const { return static_cast<std::int32_t>(device_of_stage.size()); }

  /// The stages `device` holds in any replica, ascending, each once (a replicated stage's weights
  /// exist once per device that holds it: static memory, optimizer steps, gradient syncs).
  std::vector<std::int32_t> stages_held_by(std::int32_t device) const;
  /// stages_held_by for every device at once (`devices` entries): one pass over the maps, where
  /// a loop of stages_held_by over the devices is quadratic (65,536 stages: 4 G steps).
  std::vector<std::vector<std::int32_t>> stages_by_device(std::int32_t devices) const;
  /// The devices holding `stage` in any replica, ascending, each once.
  std::vector<std::int32_t> holders_of(std::int32_t stage) const;

  /// s -> s (GPipe, 1F1B).
  static Placement straight(std::int32_t stages);
  /// s -> s mod devices (interleaved, looped BFS).
  static Placement loop(std::int32_t devices, std::int32_t stages);
  /// 2p stages on p devices: device r holds r and 2p-1-r (ZB-V, DualPipeV).
  static Placement v_shape(std::int32_t devices);
};

struct Table {
  std::int32_t devices = 0;
  std::int32_t stages = 0;  // global stages, devices * chunks for uniform shapes
  std::int32_t chunks = 1;  // table stages per cost-profile stage
  std::int32_t microbatches = 0;
  Placement placement;
  std::vector<std::vector<Op>> device_ops;  // [device] -> ops in execution order

  /// A table of the given shape with an empty op list per device: stages = devices * chunks.
  static Table empty(std::int32_t devices, std::int32_t chunks, std::int32_t microbatches,
                     Placement placement);

  std::size_t op_count() const;
  /// Whether (stage, microbatch) has a separate W op (then its B is backward-for-inputs only).
  /// Computed by scanning; callers that need it per op build an index (see TableIndex).
  bool has_weight_op(std::int32_t stage, std::int32_t microbatch) const;
};

}  // namespace bubblesim
