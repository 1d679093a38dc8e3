#pragma once
// SimulationResult: what one replay produced: status, per-op timings and the metrics of
// README "Metrics and formulas".

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/component_results.h"
#include "sim/engine/symmetry/symmetry_mode.h"
#include "sim/engine/sync_metrics.h"
#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

enum class RunStatus { Ok, Deadlock, OutOfMemory };
std::string_view run_status_name(RunStatus s);  // "ok", "deadlock", "out_of_memory"

struct OpTiming {
  Time start;
  Time end;
  friend bool operator==(const OpTiming&, const OpTiming&) = default;
};

/// Every op's timing, one row per device parallel to table.device_ops, stored in one array
/// (device-major, the engine's node order). Rows are spans: timings[d][i], timings[d].size(),
/// `for (auto row : timings)`. An op that never ran (deadlock) has start = end = -1 ps.
class OpTimings {
 public:
  OpTimings() = default;
  /// Rows of `ops_per_device[d]` entries each, all unset.
  explicit OpTimings(const std::vector<std::size_t>& ops_per_device) {
    offset_.reserve(ops_per_device.size() + 1);
    offset_.push_back(0);
    for (std::size_t n : ops_per_device) offset_.push_back(offset_.back() + n);
    flat_.assign(offset_.back(), OpTiming{Time::from_ps(-1), Time::from_ps(-1)});
  }
  std::size_t size() const { return offset_.empty() ? 0 : offset_.size() - 1; }
  bool empty() const { return size() == 0; }
  std::span<const OpTiming> operator[](std::size_t d) const {
    return {flat_.data() + offset_[d], flat_.data() + offset_[d + 1]};
  }
  std::span<OpTiming> operator[](std::size_t d) {
    return {flat_.data() + offset_[d], flat_.data() + offset_[d + 1]};
  }
  /// All ops, device-major.
  std::span<const OpTiming> all() const { return flat_; }
  std::span<OpTiming> all() { return flat_; }

  class Iterator {
   public:
    Iterator(const OpTimings* t, std::size_t d) : t_(t), d_(d) {}
    std::span<const OpTiming> operator*() const { return (*t_)[d_]; }
    Iterator& operator++() {
      ++d_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return d_ != o.d_; }

   private:
    const OpTimings* t_;
    std::size_t d_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  std::vector<OpTiming> flat_;
  std::vector<std::size_t> offset_;
};

struct OutOfMemory {
  std::int32_t device = -1;  // the device whose allocation (or offload, for a host) went over
  std::string host;  // empty: device memory; else the host vertex whose capacity was exceeded
  Time time;
  std::string op;  // the op whose allocation went over
  Bytes over;      // bytes above the budget at that moment
  Bytes budget;
};

struct LinkUsage {
  std::string name;
  Time busy;
  Bytes bytes;
};

/// Memory peaks (docs/memory.md): activations alone and with the static memory.
struct MemoryMetrics {
  Bytes peak_activation;
  std::vector<Bytes> peak_activation_per_device;
  std::vector<Time> peak_activation_time_per_device;
  double peak_activation_units = 0.0;  // in one table stage's microbatch activation (chunk units)
  std::vector<double> peak_activation_units_per_device;
  std::vector<Bytes> peak_memory_per_device;      // static + activations
  std::vector<Time> peak_memory_time_per_device;  // when that peak was first reached
};

/// Offload (filled by the engine, not compute_metrics): bytes copied to host by O ops, the time a
/// compute op waited for its reload beyond its other dependencies, and copy-engine busy time.
struct OffloadMetrics {
  Bytes offloaded_bytes;
  std::vector<Bytes> offloaded_bytes_per_device;
  Time exposed_offload;  // sum over devices
  std::vector<Time> exposed_offload_per_device;
  std::vector<Time> d2h_busy_per_device;
  std::vector<Time> h2d_busy_per_device;
};

/// Point-to-point communication: compute idle caused by data in flight (blocking sends count
/// here too) and the links that carried it.
struct CommMetrics {
  Time exposed_comm;  // max over devices of compute idle caused by data in flight
  std::vector<Time> exposed_comm_per_device;
  std::vector<LinkUsage> links;  // topology links that carried traffic
  /// Whether the flows were solved by class or one by one, and why (docs/engine.md).
  FlowSymmetry symmetry;
};

/// The expert all-to-all as the replay ran it (EngineInput::a2a; docs/moe.md), per device: its
/// time inside the device's ops, the part left exposed, the compute its SMs slowed. Empty when
/// it did not run as flows (the report then takes it from the stage costs).
struct A2aMetrics {
  std::vector<Time> total_per_device, exposed_per_device, slowdown_per_device;
};

/// Whole iterations (iteration_plan.h): the period of the last replayed iteration, from the end
/// of the previous one (every device's step done) to the end of this one; with one iteration,
/// from 0 to its end. Includes pairwise syncs, the barrier and the optimizer step.
struct IterationMetrics {
  Time iteration_time;
  std::int32_t iterations = 0;  // iterations covered (replayed, or shifted copies of one)
  std::int32_t replays = 0;     // iterations actually replayed
};

/// The metrics of one replay, by concern: the compute timeline here, then memory, offload,
/// communication, gradient sync, iterations, and what each behaviour measured.
struct Metrics {
  Time makespan;
  Time stage_span_max;
  double bubble_ratio = 0.0;
  double bubble_ratio_span = 0.0;
  std::vector<Time> busy_per_device;  // compute stream busy time (recompute included)
  std::vector<Time> span_per_device;  // first start to last end of compute ops
  Time recompute_time;
  MemoryMetrics memory;
  OffloadMetrics offload;
  CommMetrics comm;
  SyncMetrics sync;  // gradient sync, optimizer, TP (docs/parallelism.md)
  A2aMetrics a2a;
  IterationMetrics iteration;
  /// What each engaged behaviour measured, under its own record type (component_kind.h).
  ComponentResults components;
};

/// The behaviours a replay engaged (sim/engine/component_kind.h), by name in the order they are
/// registered, and each shortcut of the replay that one of them refused, with the first that did.
struct ComponentUse {
  struct Refusal {
    std::string path;  // "list-replay", "stream-replay", "shifted-iterations"
    std::string by;    // the behaviour's name
  };
  std::vector<std::string> engaged;
  std::vector<Refusal> refused;
};

struct SimulationResult {
  RunStatus status = RunStatus::Ok;
  std::string failure;                     // deadlock: the blocked ops; OOM: a summary
  std::vector<OutOfMemory> out_of_memory;  // first overflow per device
  OpTimings timings;                       // parallel to table.device_ops; unfinished = -1
  Metrics metrics;
  std::uint64_t events = 0;
  bool list_scheduled = false;  // replayed by list scheduling, not by the event loop
  ComponentUse components;      // the behaviours it engaged
};

}  // namespace bubblesim
