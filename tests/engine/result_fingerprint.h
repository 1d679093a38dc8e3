#pragma once
// An order-sensitive fingerprint of everything a replay reports (status, failure, out-of-memory
// records, every op's start and end, every metric including per-link usage), so that two
// replays can be compared bit for bit in one check.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/simulation_result.h"

namespace bubblesim::testing {

// FNV-1a over 64-bit words: order-sensitive, so any moved op or changed number shows.
struct Fingerprint {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t x) {
    for (int i = 0; i < 8; ++i) {
      h ^= (x >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  void add(Time t) { add(static_cast<std::uint64_t>(t.ps())); }
  void add(Bytes b) { add(static_cast<std::uint64_t>(b.count())); }
  void add(double d) {
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof d);
    __builtin_memcpy(&bits, &d, sizeof d);
    add(bits);
  }
  void add(const std::string& s) {
    add(static_cast<std::uint64_t>(s.size()));
    for (char c : s) add(static_cast<std::uint64_t>(static_cast<unsigned char>(c)));
  }
  template <typename T>
  void add(const std::vector<T>& v) {
    add(static_cast<std::uint64_t>(v.size()));
    for (const T& x : v) add(x);
  }
};

inline std::uint64_t fingerprint(const SimulationResult& r) {
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(r.status));
  f.add(r.failure);
  for (const OutOfMemory& o : r.out_of_memory) {
    f.add(static_cast<std::uint64_t>(o.device));
    f.add(o.host);
    f.add(o.time);
    f.add(o.op);
    f.add(o.over);
    f.add(o.budget);
  }
  for (const auto& device : r.timings) {
    for (const OpTiming& t : device) {
      f.add(t.start);
      f.add(t.end);
    }
  }
  const Metrics& m = r.metrics;
  f.add(m.makespan);
  f.add(m.stage_span_max);
  f.add(m.bubble_ratio);
  f.add(m.bubble_ratio_span);
  f.add(m.busy_per_device);
  f.add(m.span_per_device);
  f.add(m.recompute_time);
  f.add(m.memory.peak_activation);
  f.add(m.memory.peak_activation_per_device);
  f.add(m.memory.peak_activation_time_per_device);
  f.add(m.memory.peak_activation_units);
  f.add(m.memory.peak_activation_units_per_device);
  f.add(m.memory.peak_memory_per_device);
  f.add(m.memory.peak_memory_time_per_device);
  f.add(m.offload.offloaded_bytes);
  f.add(m.offload.offloaded_bytes_per_device);
  f.add(m.offload.exposed_offload);
  f.add(m.offload.exposed_offload_per_device);
  f.add(m.offload.d2h_busy_per_device);
  f.add(m.offload.h2d_busy_per_device);
  f.add(m.comm.exposed_comm);
  f.add(m.comm.exposed_comm_per_device);
  for (const LinkUsage& l : m.comm.links) {
    f.add(l.name);
    f.add(l.busy);
    f.add(l.bytes);
  }
  return f.h;
}

}  // namespace bubblesim::testing
