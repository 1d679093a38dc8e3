#pragma once
// How a collective over a group of GPUs of a topology is decomposed into flows: the algorithm a
// scenario names (`data_parallel.algorithm`) and the engine's collectives run
// (sim/engine/collectives.h has the steps and closed forms).

#include <string_view>

namespace bubblesim {

enum class CollectiveAlgorithm { Ring, Tree, Hierarchical };

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
