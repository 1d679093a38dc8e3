#pragma once
// MemoryAccounting: device and host memory during a replay (docs/memory.md). Each device
// holds the static memory of every distinct stage it holds plus the activations resident now;
// the event loop reports when an op starts and ends, and this says what that allocates or frees:
//
//   start  F, R, the forward half of F&B: the activation (its stage input only when recomputed)
//          L (reload): what the offload moved, taken back when the H2D copy starts
//          O (offload): what is resident now moves; the host takes it when the copy starts
//   end    B, the backward half of F&B: everything (fused or not split), else by the release
//          convention (Split: all but the weight-gradient part); W: the rest
//          O: device memory freed when the D2H copy ends; L: host memory freed
//
// Peaks (bytes, count of live activations, and when they were first reached) and the first
// overflow of each device budget and host capacity are recorded; an overflow is an outcome,
// not an error. Observers see every change (EngineObserver::on_memory).

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/device_memory.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/observer.h"
#include "sim/engine/op_graph.h"

namespace bubblesim {

class MemoryAccounting {
 public:
  /// `budget`: per device, empty = unlimited. `hosts`: where each device offloads.
  MemoryAccounting(const OpGraph& graph, ReleaseConvention release, std::vector<Bytes> budget,
                   std::optional<Bytes> host_capacity, HostLayout hosts,
                   const std::vector<EngineObserver*>& observers);

  /// Node n starts at `now`. Returns the bytes it moves when it is a copy (else zero).
  Bytes on_start(std::uint32_t n, Time now);
  /// Node n ends at `now`.
  void on_end(std::uint32_t n, Time now);

  /// First overflow per device and host, in the order they happened.
  const std::vector<OutOfMemory>& out_of_memory() const { return oom_; }
  const std::vector<DeviceMemory>& devices() const { return devices_; }
  const std::vector<Bytes>& offloaded() const { return offloaded_; }

 private:
  struct Activation {  // one (stage, microbatch): what of it is on the device and on the host
    Bytes resident;
    Bytes offloaded;
    bool counted = false;  // holds one unit of the activation count
  };
  Activation& activation(std::int32_t s, std::int32_t j) {
    return activations_[static_cast<std::size_t>(s) * microbatches_ + static_cast<std::size_t>(j)];
  }
  void allocate(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes, Time now,
                const Op& op);
  void release(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes, bool release_unit,
               Time now);
  void release_backward(std::uint32_t n, std::int32_t s, std::int32_t j, Time now);
  /// A split backward's backward_growth, allocated at its start (nothing when zero).
  void allocate_growth(std::uint32_t n, std::int32_t s, std::int32_t j, Time now);
  void notify(std::int32_t device, Time now);

  const OpGraph& graph_;
  ReleaseConvention release_;
  std::vector<Bytes> budget_;
  std::optional<Bytes> host_capacity_;
  HostLayout hosts_;
  const std::vector<EngineObserver*>& observers_;
  std::size_t microbatches_;

  std::vector<Activation> activations_;  // [stage * m + microbatch]
  std::vector<DeviceMemory> devices_;
  std::vector<OutOfMemory> oom_;
  std::vector<bool> oom_seen_;
  std::vector<Bytes> host_now_;
  std::vector<bool> host_oom_seen_;
  std::vector<Bytes> offloaded_;   // per device
  std::vector<Bytes> copy_bytes_;  // per node, what a copy moves (sized on the first copy)
};

}  // namespace bubblesim
