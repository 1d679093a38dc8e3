#pragma once
// SimulationResult: what one replay produced: status, per-op timings and the metrics of
// DESIGN.md section 5.

#include <cstdint>
#include <string>
#include <vector>

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

struct Metrics {
  Time makespan;
  Time stage_span_max;
  double bubble_ratio = 0.0;
  double bubble_ratio_span = 0.0;
  std::vector<Time> busy_per_device;  // compute stream busy time (recompute included)
  std::vector<Time> span_per_device;  // first start to last end of compute ops
  Time recompute_time;
  Bytes peak_activation;
  std::vector<Bytes> peak_activation_per_device;
  std::vector<Time> peak_activation_time_per_device;
  double peak_activation_units = 0.0;  // in one table stage's microbatch activation (chunk units)
  std::vector<double> peak_activation_units_per_device;
  std::vector<Bytes> peak_memory_per_device;      // static + activations
  std::vector<Time> peak_memory_time_per_device;  // when that peak was first reached
  // Offload (filled by the engine, not compute_metrics): bytes copied to host by O ops, the time
  // a compute op waited for its reload beyond its other dependencies, and copy-engine busy time.
  Bytes offloaded_bytes;
  std::vector<Bytes> offloaded_bytes_per_device;
  Time exposed_offload;  // sum over devices
  std::vector<Time> exposed_offload_per_device;
  std::vector<Time> d2h_busy_per_device;
  std::vector<Time> h2d_busy_per_device;
  Time exposed_comm;  // max over devices of compute idle caused by data in flight
  std::vector<Time> exposed_comm_per_device;
  std::vector<LinkUsage> links;  // topology links that carried traffic
  SyncMetrics sync;              // gradient sync, optimizer, TP (docs/parallelism.md)
  // Whole iterations (iteration_plan.h): the period of the last replayed iteration, from the
  // end of the previous one (every device's step done) to the end of this one; with one
  // iteration, from 0 to its end. Includes pairwise syncs, the barrier and the optimizer step.
  Time iteration_time;
  std::int32_t iterations = 0;  // iterations covered (replayed, or shifted copies of one)
  std::int32_t replays = 0;     // iterations actually replayed
  // Blocking p2p: compute held after an op until its sends arrived (largest over devices).
  Time blocked_send;
  std::vector<Time> blocked_send_per_device;
};

struct SimulationResult {
  RunStatus status = RunStatus::Ok;
  std::string failure;                         // deadlock: the blocked ops; OOM: a summary
  std::vector<OutOfMemory> out_of_memory;      // first overflow per device
  std::vector<std::vector<OpTiming>> timings;  // parallel to table.device_ops; unfinished = -1
  Metrics metrics;
  std::uint64_t events = 0;
};

}  // namespace bubblesim
