#pragma once
// The least number of ops (and placement entries) a generator's table can hold, computed from the
// pipeline shape and the generator's shape parameters before generating it, so --max-ops refuses
// a table that would take gigabytes before any of it is built.
//
// Generators state their size through parameters with conventional names:
//   chunks     v model chunks per device: v x p stages (interleaved, looped)
//   waves      W waves: 2W chunks per device (Hanayo)
//   pipelines  f rotated pipeline pairs: 2f replicas, each placing every stage (Chimera)
// Every stage runs at least a forward and a backward per microbatch.

#include <cstdint>
#include <string>

#include "schedules/generator.h"

namespace bubblesim {

struct OpBound {
  std::int64_t ops = 0;  // saturates at INT64_MAX
  std::string shape;     // "4 stages x 8 microbatches x 3 chunks", what the count multiplies
};

/// The bound for `generator` with `params` (its defaults fill absent shape parameters) on
/// `stages` devices and `microbatches` microbatches.
OpBound minimum_ops(const Generator& generator, const ParamValues& params, std::int64_t stages,
                    std::int64_t microbatches);

}  // namespace bubblesim
