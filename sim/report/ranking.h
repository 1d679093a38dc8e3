#pragma once
// Ranking of schedules at each abstraction level, and where the levels disagree.
// The formula level ranks by closed-form bubble ratio; the table and simulation levels rank by
// iteration time (makespan: it includes gradient sync and the optimizer step, which bubble ratios
// do not). A change formula -> table compares bubble ratios at both levels (the closed form has
// no time), a change table -> simulation compares makespans. Lower is better everywhere.

#include <string>
#include <vector>

#include "sim/runner/scenario_runner.h"

namespace bubblesim {

struct RankingChange {
  std::string better;  // ranked ahead at the earlier level
  std::string worse;
  std::string from_level, to_level;
  std::string reason;  // e.g. "communication on the critical path: exposed comm 1.2ms vs 0.1ms"
};

struct Ranking {
  std::vector<std::string> formula, table,
      simulation;  // labels, best first (formula: those with one)
  std::vector<RankingChange> changes;
};

Ranking rank_schedules(const ScenarioRun& result);

}  // namespace bubblesim
