#pragma once
// Shared inputs for the benchmarks: uniform costs and generated tables.

#include <string>

#include "schedules/builtin_generators.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"
#include "topologies/topology_builders.h"

namespace bubblesim::bench {

/// Heap bytes in use now, and the most in use since the last reset_heap_peak() (operator new and
/// delete of the benchmark binary count them; bench_main.cpp).
std::size_t heap_in_use();
std::size_t heap_peak();
void reset_heap_peak();

inline StageCost unit_cost() {
  StageCost c;
  c.forward = Time::from_seconds(1e-3);
  c.backward_input = Time::from_seconds(2e-3);
  c.backward_weight = Time::from_seconds(1e-3);
  c.activation = Bytes(1 << 20);
  c.weight_grad = Bytes(1 << 19);
  c.p2p = Bytes(8 << 20);
  return c;
}

/// The fat-tree builder's 65,536-GPU cluster: 8192 nodes of 8 GPUs, radix-64 switches.
inline Topology fat_tree_65536() {
  ClusterParams p;
  p.nodes = 8192;
  p.shape = NetworkShape::FatTree;
  p.switch_radix = 64;
  return build_cluster(p);
}

inline const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

inline GeneratorInput input(int p, int m, const StageCost& c) {
  GeneratorInput in;
  in.devices = p;
  in.microbatches = m;
  in.costs = CostProfile::uniform(p, c);
  return in;
}

}  // namespace bubblesim::bench
