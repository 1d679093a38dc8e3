#pragma once
// DurationModel: how long each op of a graph takes in one replay. The engine asks for all
// durations before each iteration it replays (iteration_plan.h), so a model that draws them from
// distributions (Monte Carlo) replays the same op graph many times with new durations and never
// rebuilds it; a model is a pure function of (ops, iteration), so replays are reproducible. The
// default, CostDurations, reads them from the stage costs and slows every compute op of a straggler
// down. A model may also stretch what the network model times (jitters_network): the fixed delay
// or route latency of each transfer and the time of each copy (docs/variability.md).

#include <cstdint>
#include <vector>

#include "schedules/stage_costs.h"
#include "sim/engine/op_index.h"
#include "sim/units/time.h"

namespace bubblesim {

/// `t` times `factor`, rounded to the nearest picosecond; OverflowError when it does not fit.
Time scaled(Time t, double factor);

class DurationModel {
 public:
  virtual ~DurationModel() = default;
  /// out[n] = compute time of node n in iteration `iteration` (0 first; resized to
  /// index.size()). Copies (O, L) get zero: their time comes from the network model.
  virtual void fill(const OpIndex& index, const std::vector<StageCost>& costs,
                    std::int32_t iteration, std::vector<Time>& out) const = 0;
  /// Whether durations differ between iterations (a sampling model); a model that does not
  /// lets the engine skip replays whose result is a shift of the previous one.
  virtual bool varies_by_iteration() const { return true; }

  /// Whether transfer_factor or copy_factor can differ from 1 (else the network skips them).
  virtual bool jitters_network() const { return false; }
  /// Factor on the fixed delay (fixed-delay network) or the route latency (topology network) of
  /// the transfer from node `producer` on device `from` to node `consumer` on device `to` in
  /// iteration `iteration`.
  virtual double transfer_factor(std::int32_t /*from*/, std::int32_t /*to*/,
                                 std::uint32_t /*producer*/, std::uint32_t /*consumer*/,
                                 std::int32_t /*iteration*/) const {
    return 1.0;
  }
  /// Factor on the time of copy node `node` of `device` in iteration `iteration`: its
  /// private-link time, or its route latency over a topology (the flow itself is shared bandwidth
  /// and is not stretched).
  virtual double copy_factor(std::int32_t /*device*/, std::uint32_t /*node*/,
                             std::int32_t /*iteration*/) const {
    return 1.0;
  }
};

/// Durations from the stage costs: F, B (backward for inputs when a W exists, else the full
/// backward), W, R (its own cost, else a forward), F&B (the fused cost, else the sum of both
/// halves), each compute op multiplied by its device's slowdown factor (empty = none).
class CostDurations final : public DurationModel {
 public:
  explicit CostDurations(std::vector<double> compute_slowdown = {})
      : slowdown_(std::move(compute_slowdown)) {}
  void fill(const OpIndex& index, const std::vector<StageCost>& costs, std::int32_t iteration,
            std::vector<Time>& out) const override;
  bool varies_by_iteration() const override { return false; }
  /// The unslowed duration of one op.
  static Time of(const OpIndex& index, const std::vector<StageCost>& costs, const Op& op);
  /// The duration of one op on `device` (slowed when it is a compute op of a straggler).
  Time on(const OpIndex& index, const std::vector<StageCost>& costs, const Op& op,
          std::int32_t device) const {
    const Time t = of(index, costs, op);
    const auto d = static_cast<std::size_t>(device);
    if (d < slowdown_.size() && slowdown_[d] != 1.0 && stream_of(op.kind) == Stream::Compute)
      return scaled(t, slowdown_[d]);
    return t;
  }

 private:
  std::vector<double> slowdown_;
};

}  // namespace bubblesim
