#pragma once
// The generator contract: what every schedule generator, built-in or plugin, must satisfy on every
// input it accepts. check_generator_contract runs one generator over a grid of pipeline shapes
// (p, m and, for generators with a `chunks` or `v` parameter, v; every other parameter at its
// default) and checks, per accepted input:
//   - the table validates (each op exactly once, same-device order respects dependencies,
//     placement sane) and has the requested shape (devices = p, microbatches = m,
//     stages = p * chunks, chunks = v when v was requested);
//   - the idealized replay finishes (no deadlock);
//   - the closed-form activation peak, if the generator has one, equals the replay's peak in
//     chunk units with equal F, B, W times;
//   - the closed-form bubble ratio, if it has one, equals the replay's makespan bubble ratio with
//     equal F and B times and W = 0 (tolerance 1e-9);
//   - generation is deterministic (two calls give identical tables).
// Inputs rejected with ScheduleConstraintError are skipped and counted; any other exception is a
// failure. At least one input of the grid must be accepted.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/generator.h"

namespace bubblesim {

struct ContractGrid {
  std::vector<std::int32_t> devices{1, 2, 3, 4, 8};
  std::vector<std::int32_t> microbatches{1, 2, 3, 4, 6, 8, 9, 16, 24};
  std::vector<std::int32_t> chunks{1, 2, 3, 4};  // only for generators with a chunks/v parameter
  ParamValues params;  // values that replace the generator's defaults (e.g. a plugin's own knob)
};

struct ContractFailure {
  std::string generator;
  std::int32_t devices = 0;  // 0 for failures not tied to one input
  std::int32_t microbatches = 0;
  std::int32_t chunks = 0;  // 0 when the generator has no chunks parameter
  std::string check;        // "generate", "validate", "shape", "replay", "peak", "bubble", ...
  std::string message;
};

/// "NAME p=4 m=8 v=2: CHECK: MESSAGE".
std::string to_string(const ContractFailure& failure);

struct ContractStats {
  int accepted = 0;  // inputs that produced a table
  int rejected = 0;  // inputs refused with ScheduleConstraintError
};

/// Every contract failure of `generator` over `grid`; empty when it passes. `stats`, if given,
/// receives how many inputs were accepted and rejected.
std::vector<ContractFailure> check_generator_contract(const Generator& generator,
                                                      const ContractGrid& grid,
                                                      ContractStats* stats = nullptr);

}  // namespace bubblesim
