#pragma once
// How a collective over a group of GPUs of a topology is decomposed into flows: the algorithm a
// scenario names (`data_parallel.algorithm`, `data_parallel.ring_steps`) and the engine's
// collectives run
// (sim/engine/collectives.h has the steps and closed forms).

#include <string_view>

namespace bubblesim {

enum class CollectiveAlgorithm { Ring, Tree, Hierarchical };

/// How the steps of a ring are simulated (`data_parallel.ring_steps`, docs/parallelism.md).
/// Stepped: each of the ring's steps is n flows of one chunk, and a step starts when the previous
/// one has fully arrived (the textbook model). Pipelined (default): the ring's consecutive steps
/// move the same chunk size over the same n routes, so they are simulated once: n flows, each
/// carrying all its steps' bytes, ending `steps` route latencies after the last byte. NCCL
/// pipelines a ring's chunks in the same way (every ring link busy at once, not step after step).
/// On an idle network with disjoint routes both give the closed form; the pipelined ring is
/// 2(n - 1) times fewer flows and events (DP 64: 126x), and a slow flow no longer holds the other
/// flows of its step back.
enum class RingSteps { Pipelined, Stepped };

/// "ring", "tree", "hierarchical".
constexpr std::string_view collective_algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::Tree:
      return "tree";
    case CollectiveAlgorithm::Hierarchical:
      return "hierarchical";
  }
  return "?";
}

}  // namespace bubblesim
