#pragma once
// What `bubblesim check-plugin` prints: the plugin's identity, then per generator the contract's
// verdict and its first failures.

#include <cstddef>
#include <string>
#include <vector>

#include "schedules/plugin_loader.h"
#include "sim/runner/generator_contract.h"

namespace bubblesim {

/// The contract's result for one generator.
struct GeneratorContractResult {
  std::string name;
  std::vector<ContractFailure> failures;
  ContractStats stats;
};

/// At most `failures_shown` failures per generator; the count of the rest follows.
std::string plugin_check_text(const LoadedPlugin& plugin,
                              const std::vector<GeneratorContractResult>& results,
                              std::size_t failures_shown = 20);

}  // namespace bubblesim
