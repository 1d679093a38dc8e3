#pragma once
// ZeRO 2/3's collectives inside every microbatch's ops (DataParallelSemantics::PerMicrobatch,
// docs/models.md "Per-op collectives"): a stage's FSDP units (its embedding, each layer, its LM
// head) are all-gathered before F and B and reduce-scattered after B on one communicator. With
// prefetch each unit's collectives run while the unit before it computes; what the compute does
// not hide, the first unit's gather and the last unit's reduce-scatter are the op's zero_comm.

#include <cstdint>
#include <functional>
#include <vector>

namespace bubblesim {

/// One FSDP unit of a stage on one GPU.
struct ShardUnit {
  double params = 0;         // parameters before sharding (after the TP split)
  double linear_params = 0;  // of them, linear-layer weights (gathered in FP8 when asked)
  double forward_s = 0;      // its share of F's compute
  double backward_s = 0;     // its share of B's and W's compute
};

/// What one unit's collectives take on an otherwise idle network, in seconds.
struct UnitComm {
  double gather = 0;     // the parameters' all-gather over the shard group
  double scatter = 0;    // the gradients' reduce-scatter over the shard group
  double replicate = 0;  // HSDP: the gradient shard's all-reduce over the replicate group
};

/// Which per-microbatch collectives run and how.
struct ShardedSchedule {
  bool gather_forward = false, gather_backward = false, reduce_scatter = false;
  bool prefetch = true;
  /// Units whose gradients one reduce-scatter carries (DeepSpeed's reduce_bucket_size); 1: FSDP's
  /// one reduce-scatter per unit.
  std::int64_t units_per_reduce = 1;
  /// `overlap.comm_sm_fraction`: the compute beside a hidden collective runs at 1 - f.
  double sm_fraction = 0;
};

/// The exposed time each pass carries.
struct ShardedExposure {
  double forward = 0, backward_input = 0, backward_weight = 0;
};

/// `units` in forward order; `time` gives one collective's times for `params` parameters of
/// which `linear` are linear weights. B's exposure goes to B and W in proportion to the gathers'
/// and the reduce-scatters' summed times (a split backward: B gathers, W reduce-scatters).
ShardedExposure sharded_exposure(const std::vector<ShardUnit>& units, const ShardedSchedule& s,
                                 const std::function<UnitComm(double params, double linear)>& time);

}  // namespace bubblesim
