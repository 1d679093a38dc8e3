#pragma once
// What a collective runs and how: its kind (all-reduce, reduce-scatter, all-gather) and the
// algorithm a scenario names (`data_parallel.algorithm`, `data_parallel.ring_steps`,
// docs/parallelism.md). sim/engine/collectives.h lays each algorithm out as flows on a topology;
// topologies/nccl/ has NCCL's own choice among them.

#include <optional>
#include <string_view>

namespace bubblesim {

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };

/// "all-reduce", "reduce-scatter", "all-gather".
constexpr std::string_view collective_kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce:
      return "all-reduce";
    case CollectiveKind::ReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::AllGather:
      return "all-gather";
  }
  return "?";
}

/// How a collective is laid out. Auto: NCCL's choice by its tuning model where the scenario turns
/// it on (`first_principles.nccl_tuning`), else Ring. Ring, Tree (NCCL's double binary tree),
/// Nvls and NvlsTree (NVLink SHARP inside the node; NvlsTree adds trees between nodes), Pat (NCCL's
/// all-gather / reduce-scatter for one GPU per node) and CollNet (in-network reduction on a SHARP
/// switch) are NCCL's algorithms; Hierarchical is bubblesim's own (rings inside and between nodes).
enum class CollectiveAlgorithm { Auto, Ring, Tree, Nvls, NvlsTree, Pat, CollNet, Hierarchical };

/// "auto", "ring", "tree", "nvls", "nvls_tree", "pat", "collnet", "hierarchical": the scenario
/// key's values and the names reports print.
constexpr std::string_view collective_algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Auto:
      return "auto";
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::Tree:
      return "tree";
    case CollectiveAlgorithm::Nvls:
      return "nvls";
    case CollectiveAlgorithm::NvlsTree:
      return "nvls_tree";
    case CollectiveAlgorithm::Pat:
      return "pat";
    case CollectiveAlgorithm::CollNet:
      return "collnet";
    case CollectiveAlgorithm::Hierarchical:
      return "hierarchical";
  }
  return "?";
}

/// The algorithm a name stands for (collective_algorithm_name's inverse); nullopt when none.
constexpr std::optional<CollectiveAlgorithm> collective_algorithm_from_name(std::string_view s) {
  for (auto a : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                 CollectiveAlgorithm::Nvls, CollectiveAlgorithm::NvlsTree, CollectiveAlgorithm::Pat,
                 CollectiveAlgorithm::CollNet, CollectiveAlgorithm::Hierarchical}) {
    if (collective_algorithm_name(a) == s) return a;
  }
  return std::nullopt;
}

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

/// How many channels a collective spread over nodes runs (`data_parallel.channels`): Nics (default)
/// one per NIC its ranks use on a node, as NCCL's rail-aligned rings and trees do; One: a single
/// ring that crosses each node boundary through one GPU's NIC (the ablation).
enum class CollectiveChannels { Nics, One };

}  // namespace bubblesim
