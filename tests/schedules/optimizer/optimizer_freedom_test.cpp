// More freedom never gives a worse plan: `optimized` with recompute (and offload) allowed is never
// slower, replayed by the engine under the same budget, than the same problem without them, at
// the same evaluation budget. A property over random small instances (uneven per-stage costs,
// budgets from one to three activations, every objective), each replayed as the runner would.
#include <doctest/doctest.h>

#include <random>

#include "optimizer_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

/// The engine's replay of `t` under `in`'s costs, delay and per-device budget (as the runner
/// gives them) and, with offload, a private PCIe link per GPU; its cost as `objective` counts it.
double replayed(const Table& t, const GeneratorInput& in, Bytes budget,
                const std::string& objective, std::optional<Bandwidth> link) {
  EngineInput e;
  e.table = &t;
  e.stage_costs = in.costs.for_table(t.chunks);
  e.network = FixedDelayNetwork{in.delay};
  e.memory_budget.assign(static_cast<std::size_t>(t.devices), budget);
  e.offload_bandwidth = link;
  const SimulationResult r = simulate(e);
  REQUIRE(r.status == RunStatus::Ok);
  if (objective == "makespan") return r.metrics.makespan.seconds();
  Time span = Time::zero();
  for (std::size_t d = 0; d < r.timings.size(); ++d) {
    if (r.timings[d].empty()) continue;
    span = std::max(span, r.timings[d].back().end - r.timings[d].front().start);
  }
  return span.seconds();
}

}  // namespace

TEST_CASE("optimized: recompute or offload allowed is never worse than not (property)") {
  std::mt19937_64 rng(45);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const Bandwidth link = Bandwidth::bytes_per_second(64e9);
  int compared = 0;
  for (int k = 0; k < 24; ++k) {
    const int p = uniform(2, 5), m = uniform(2, 10);
    GeneratorInput in;
    in.devices = p;
    in.microbatches = m;
    for (int s = 0; s < p; ++s) {
      StageCost c = stage_cost_ms(uniform(5, 15) / 10.0, uniform(5, 20) / 10.0,
                                  uniform(2, 10) / 10.0, 1024, 512);
      c.recompute = c.forward;
      in.costs.stages.push_back(c);
    }
    in.delay = Time::from_seconds(uniform(0, 3) * 1e-4);
    in.offload_d2h.assign(static_cast<std::size_t>(p), link);
    in.offload_h2d = in.offload_d2h;
    const double units = uniform(2, 6) / 2.0;
    const std::string objective = uniform(0, 1) ? "makespan" : "stage-span";
    in.params.set("budget_units", units);
    in.params.set("budget_evals", std::int64_t{1500});
    in.params.set("objective", objective);
    in.params.set("method", std::string(uniform(0, 2) ? "heuristic" : "auto"));
    in.params.set("placement", std::string(uniform(0, 1) ? "straight" : "v"));
    CAPTURE(k);
    CAPTURE(p);
    CAPTURE(m);
    CAPTURE(units);
    CAPTURE(objective);
    const Bytes budget(static_cast<std::int64_t>(units * 1024 * 1024 * 1024 + 0.5));
    const Generator& g = *registry().find("optimized");
    Table plain;
    try {
      plain = g.generate(in);
    } catch (const ScheduleConstraintError&) {
      continue;  // nothing fits without memory operations
    }
    const double without = replayed(plain, in, budget, objective, std::nullopt);
    for (const char* freedom : {"recompute", "offload"}) {
      CAPTURE(freedom);
      GeneratorInput more = in;
      more.params.set(freedom, true);
      const Table t = g.generate(more);
      const double with =
          replayed(t, more, budget, objective,
                   std::string(freedom) == "offload" ? std::optional(link) : std::nullopt);
      CHECK(with <= without * (1 + 1e-12));
      ++compared;
    }
  }
  CHECK(compared >= 30);
}
