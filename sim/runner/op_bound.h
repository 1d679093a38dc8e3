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
  std::int64_t ops = 0;             // saturates at INT64_MAX
  std::int64_t virtual_stages = 0;  // stages x chunks (+ replicas' placements), saturating
  std::string shape;  // "4 stages x 8 microbatches x 3 chunks", what the count multiplies
};

/// Virtual stages (stages x chunks) a table may have: each carries its costs, placement and
/// per-stage state, hundreds of bytes, so 2^31 chunks would need terabytes even within --max-ops.
/// Realistic layouts stay far below (p = 1024 x v = 64 is 65,536).
constexpr std::int64_t kMaxVirtualStages = std::int64_t{1} << 18;

/// Monte Carlo replays of one schedule: samples x iterations x (the table's ops + the fixed
/// cost of one replay, kReplayOverheadOps). At about a million replayed ops per second and core
/// this is minutes, not hours.
constexpr std::int64_t kMaxSampledOps = std::int64_t{1} << 28;

/// What one replay costs besides its ops (setting up the event loop, sampling, the result), in
/// ops of replay time: without it 10^7 samples of a 4-op table passed the bound and ran for
/// 83 s. Measured (Release, 2-core development machine, docs/reliability.md "Limits"): 200,000
/// one-iteration replays of a 4-op table and 2,000 of a 1,024-op table each take about 0.55 s,
/// so about 0.27 us per op and 1.7 us (about 6 ops) per replay; 64 keeps a tenfold margin.
constexpr std::int64_t kReplayOverheadOps = 64;

/// The replayed ops that count against kMaxSampledOps for `samples` samples of a table of `ops`
/// ops replayed for `iterations` iterations (saturating).
std::int64_t sampled_work(std::int64_t samples, std::int64_t iterations, std::int64_t ops);

/// The bound for `generator` with `params` (its defaults fill absent shape parameters) on
/// `stages` devices and `microbatches` microbatches.
OpBound minimum_ops(const Generator& generator, const ParamValues& params, std::int64_t stages,
                    std::int64_t microbatches);

}  // namespace bubblesim
