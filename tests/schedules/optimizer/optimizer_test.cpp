// The optimizing generator `optimized` (schedules/optimizer): its timing model equals the engine's
// fixed-delay replay; at the zero-bubble paper's activation limits it matches or beats the ZB-1p
// and ZB-2p columns of Table 5 (tests/data/zb_paper_table5_subset.csv); the MILP proves optimality
// on a small instance and is never worse than the heuristic; more memory never gives more bubble.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "optimizer_test_support.h"
#include "schedules/optimizer/list_scheduler.h"
#include "schedules/optimizer/optimize.h"
#include "schedules/optimizer/timing_model.h"
#include "tests/engine/engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

TEST_CASE("optimized: the predicted span and makespan equal the engine's fixed-delay replay") {
  const Row row = read_rows().front();
  const StageCost c = row_cost(row);
  const Time comm = Time::from_seconds(row.tcomm * 1e-3);
  for (double units : {8.0, 13.0, 16.0}) {
    GeneratorInput in = input(row.p, row.m, c, comm, units, "heuristic");
    const Table t = registry().find("optimized")->generate(in);
    const optimizer::Evaluation ev = optimizer::evaluate(problem_of(in, units), order_of(t));
    REQUIRE(ev.complete);
    CHECK(ev.memory_ok);
    const Bytes budget(static_cast<std::int64_t>(units * c.activation.as_double() + 0.5));
    SimulationResult r = replay_budget(t, c, comm, budget);
    REQUIRE(r.status == RunStatus::Ok);
    CHECK(r.metrics.makespan.ps() == ev.makespan);
    CHECK(r.metrics.stage_span_max.ps() == ev.span_max);
    // Also the list scheduler's own seeds (other orders than the winner).
    for (const auto& flags : optimizer::all_list_flags()) {
      auto seed = optimizer::list_schedule(problem_of(in, units), flags);
      if (!seed) continue;
      const optimizer::Evaluation se = optimizer::evaluate(problem_of(in, units), *seed);
      REQUIRE(se.complete);
    }
  }
}

TEST_CASE("optimized: at p M_B and 2p M_B the bubble is at or below the ZB-1p and ZB-2p columns") {
  for (const Row& row : read_rows()) {
    CAPTURE(row.model);
    CAPTURE(row.m);
    const StageCost c = row_cost(row);
    const Time comm = Time::from_seconds(row.tcomm * 1e-3);
    for (int factor : {1, 2}) {
      CAPTURE(factor);
      const double units = factor * row.p;
      const Table t =
          registry().find("optimized")->generate(input(row.p, row.m, c, comm, units, "heuristic"));
      const Bytes budget(static_cast<std::int64_t>(units * c.activation.as_double() + 0.5));
      SimulationResult r = replay_budget(t, c, comm, budget);
      REQUIRE(r.status == RunStatus::Ok);  // not out of memory at the limit
      const double target = factor == 1 ? row.zb_1p : row.zb_2p;
      CHECK(r.metrics.bubble_ratio_span <= target + 5e-5);
    }
  }
}

TEST_CASE("optimized: the MILP is never worse than the search and proves what the bound cannot") {
  // Uneven stage costs and a tight limit (2 M_B), so the search does not meet the certified bound.
  StageCost c = stage_cost_ms(1.0, 1.3, 0.7, 1.0, 0.4);
  GeneratorInput in = input(4, 5, c, Time::from_seconds(0.1e-3), 2.0);
  optimizer::Problem pr = problem_of(in, 2.0);
  for (std::size_t s = 0; s < 4; ++s) {
    pr.forward_ps[s] += Time::from_seconds(0.15e-3 * static_cast<double>(s)).ps();
    pr.backward_ps[s] -= Time::from_seconds(0.1e-3 * static_cast<double>(s)).ps();
  }
  optimizer::OptimizeSettings h;
  h.method = optimizer::Method::Heuristic;
  h.budget_evals = kTestEvaluations;
  const auto heuristic = optimizer::optimize(pr, h);
  REQUIRE(heuristic.feasible);
  optimizer::OptimizeSettings s;
  s.method = optimizer::Method::Milp;
  s.time_limit_s = 30;
  s.budget_evals = kTestEvaluations;
  const auto milp = optimizer::optimize(pr, s);
  REQUIRE(milp.feasible);
  CHECK(milp.cost <= heuristic.cost);
  CHECK_FALSE(heuristic.proven_optimal);
  CHECK(heuristic.gap > 0.1);
  if (optimizer::milp_available()) {
    CHECK(milp.milp_run);
    CHECK(milp.milp.binaries > 0);
    CHECK(milp.proven_optimal);  // about a second in Release
    CHECK(milp.gap == 0.0);
  }
  // The order read back replays to the predicted cost.
  const optimizer::Evaluation ev = optimizer::evaluate(pr, milp.order);
  CHECK(ev.objective == milp.cost);
}

TEST_CASE("optimized: proves optimality for p = 8, m = 16 at unit costs and limit p M_B") {
  StageCost c = stage_cost_ms(1, 1, 1, 1.0, 0.5);
  GeneratorInput in = input(8, 16, c, Time::zero(), 8.0);
  optimizer::OptimizeSettings s;
  s.method = optimizer::Method::Milp;
  s.time_limit_s = 600;  // the budgets decide (a proof takes seconds alone, more under ASan)
  s.budget_evals = kTestEvaluations;
  const auto out = optimizer::optimize(problem_of(in, 8.0), s);
  REQUIRE(out.feasible);
  CHECK(out.proven_optimal);
  CHECK(out.gap == 0.0);
  // ZB-H1's bubble (p-1)(T_F + T_B - T_W) = 7 ms is the optimum: 48 + 7 ms.
  CHECK(out.cost == Time::from_seconds(55e-3).ps());
}

TEST_CASE("optimized: an activation limit below one M_B is a constraint error") {
  StageCost c = stage_cost_ms(1, 1, 1, 1.0, 0.5);
  CHECK_THROWS_AS(registry().find("optimized")->generate(input(4, 8, c, Time::zero(), 0.5)),
                  ScheduleConstraintError);
}

TEST_CASE("optimized: the formula note names the method and the gap, and no wall-clock time") {
  StageCost c = stage_cost_ms(1, 1, 1, 1.0, 0.5);
  GeneratorInput in = input(4, 8, c, Time::zero(), 4.0, "heuristic");
  const Formula f = registry().find("optimized")->formula(in);
  CHECK(f.note.find("optimized by search") != std::string::npos);
  CHECK(f.note.find("gap") != std::string::npos);
  CHECK(f.note.find("solve time") ==
        std::string::npos);  // deterministic: the time is the run's generate_s
}

TEST_CASE(
    "optimized with V placement: the prediction is the engine's replay, and auto keeps the "
    "better") {
  const StageCost c = stage_cost_ms(1.0, 1.2, 0.6, 1.0, 0.4);
  const Time comm = Time::from_seconds(0.05e-3);
  for (double units : {2.0, 3.0, 4.0}) {
    CAPTURE(units);
    GeneratorInput in = input(4, 8, c, comm, units, "heuristic");
    in.params.set("placement", std::string("v"));
    const Table t = registry().find("optimized")->generate(in);
    REQUIRE(t.chunks == 2);
    EngineInput e;
    e.table = &t;
    e.stage_costs = CostProfile::uniform(4, c).for_table(2);
    e.network = FixedDelayNetwork{comm};
    e.memory_budget.assign(4, Bytes(static_cast<std::int64_t>(units * c.activation.as_double())));
    const SimulationResult r = simulate(e);
    REQUIRE(r.status == RunStatus::Ok);  // within the limit on every device
    const Formula f = registry().find("optimized")->formula(in);
    CHECK(f.note.find("v placement") != std::string::npos);
    // The predicted stage-span in the note is the engine's.
    CHECK(f.note.find(fmt::format("predicted stage-span {:.6g} ms",
                                  r.metrics.stage_span_max.seconds() * 1e3)) != std::string::npos);
    // auto runs the three placements and keeps the best prediction.
    GeneratorInput both = in;
    both.params.set("placement", std::string("auto"));
    const Formula fa = registry().find("optimized")->formula(both);
    CHECK(fa.note.find("placements tried: straight") != std::string::npos);
    CHECK(fa.note.find(", v ") != std::string::npos);
    CHECK(fa.note.find(", interleaved ") != std::string::npos);
    GeneratorInput straight = in;
    straight.params.set("placement", std::string("straight"));
    const Table ts = registry().find("optimized")->generate(straight);
    const Table ta = registry().find("optimized")->generate(both);
    const SimulationResult rs = replay_budget(ts, c, comm, e.memory_budget.front());
    EngineInput ea = e;
    ea.table = &ta;
    if (ta.chunks == 1) ea.stage_costs = CostProfile::uniform(4, c).for_table(1);
    const SimulationResult ra = simulate(ea);
    REQUIRE(ra.status == RunStatus::Ok);
    CHECK(ra.metrics.stage_span_max <=
          std::min(rs.metrics.stage_span_max, r.metrics.stage_span_max));
  }
}

TEST_CASE("optimized: gap stops the search early; budget_evals makes it deterministic") {
  // The uneven instance above: the search alone stays more than 10% from the certified bound.
  StageCost c = stage_cost_ms(1.0, 1.3, 0.7, 1.0, 0.4);
  optimizer::Problem pr = problem_of(input(4, 5, c, Time::from_seconds(0.1e-3), 2.0), 2.0);
  for (std::size_t s = 0; s < 4; ++s)
    pr.forward_ps[s] += Time::from_seconds(0.15e-3 * static_cast<double>(s)).ps();
  optimizer::OptimizeSettings s;
  s.method = optimizer::Method::Heuristic;
  s.budget_evals = kTestEvaluations;
  const auto full = optimizer::optimize(pr, s);
  const auto again = optimizer::optimize(pr, s);
  REQUIRE(full.feasible);
  CHECK(full.search.evaluations >= kTestEvaluations);
  CHECK(again.cost == full.cost);
  CHECK(again.order == full.order);
  CHECK(again.search.evaluations == full.search.evaluations);
  // A gap larger than the one reached stops at the first schedule within it.
  s.gap = full.gap + 0.05;
  const auto early = optimizer::optimize(pr, s);
  REQUIRE(early.feasible);
  CHECK(early.gap <= s.gap);
  CHECK(early.search.evaluations < full.search.evaluations);
}

TEST_CASE("optimized: the iteration objective's bound holds for every barrier and step") {
  StageCost c = stage_cost_ms(1.0, 1.0, 1.0, 1.0, 0.4);
  for (bool global : {false, true}) {
    optimizer::Problem pr = problem_of(input(4, 8, c, Time::from_seconds(0.1e-3), 4.0), 4.0);
    pr.objective = optimizer::Objective::Iteration;
    pr.iteration.global_barrier = global;
    pr.iteration.barrier_ps = global ? Time::from_seconds(0.2e-3).ps() : 0;
    pr.iteration.post_ps = {Time::from_seconds(1e-3).ps(), Time::from_seconds(1e-3).ps(),
                            Time::from_seconds(1e-3).ps(), Time::from_seconds(6e-3).ps()};
    optimizer::OptimizeSettings s;
    s.method = optimizer::Method::Heuristic;
    s.budget_evals = kTestEvaluations;
    const auto out = optimizer::optimize(pr, s);
    REQUIRE(out.feasible);
    CAPTURE(global);
    CHECK(out.lower_bound <= out.cost);
    CHECK(optimizer::evaluate(pr, out.order).objective == out.cost);
    // With a global barrier every device's work and step fit in one period, plus the barrier.
    if (global) {
      for (std::int32_t d = 0; d < 4; ++d)
        CHECK(out.cost >= pr.work_ps(d) + pr.post(d) + pr.iteration.barrier_ps);
    }
  }
}
