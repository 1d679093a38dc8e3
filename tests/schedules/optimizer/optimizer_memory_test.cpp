// The optimizer's offload and recompute decisions (schedules/optimizer/memory_plan.h): the timing
// model with copy engines and recomputation equals the engine's fixed-delay replay op for op; with
// a PCIe link fast enough to hide the copies (PipeOffload's k = 1) and the limit p M_B, the bubble
// is at most half of 1F1B's on every row of the zero-bubble paper's Table 5 (the optimizer's
// claim); recomputation makes a limit fit that the order alone cannot use well.
#include <doctest/doctest.h>

#include <random>

#include "optimizer_test_support.h"
#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/milp_grid.h"
#include "schedules/optimizer/optimize.h"
#include "schedules/optimizer/seeds.h"
#include "schedules/optimizer/timing_model.h"
#include "tests/engine/engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

/// The link whose copy of one M_B takes k (T_F + T_B + T_W): PipeOffload's k.
Bandwidth link_for_k(const StageCost& c, double k) {
  const Time compute = c.forward + c.backward_input + c.backward_weight;
  return Bandwidth::bytes_per_second(c.activation.as_double() / (k * compute.seconds()));
}

GeneratorInput offload_input(const Row& row, const StageCost& c, double units, Bandwidth link,
                             bool offload, bool recompute) {
  GeneratorInput in =
      input(row.p, row.m, c, Time::from_seconds(row.tcomm * 1e-3), units, "heuristic");
  in.offload_d2h.assign(static_cast<std::size_t>(row.p), link);
  in.offload_h2d = in.offload_d2h;
  in.params.set("offload", offload);
  in.params.set("recompute", recompute);
  in.params.set("time_limit", Time::from_seconds(600));  // budget_evals decides: deterministic
  in.params.set("budget_evals", std::int64_t{20000});
  return in;
}

Table table_of(const optimizer::Order& order) {
  Table t;
  t.devices = t.stages = static_cast<std::int32_t>(order.size());
  t.placement = Placement::straight(t.devices);
  t.device_ops.resize(order.size());
  for (std::size_t d = 0; d < order.size(); ++d) {
    for (const optimizer::Step& st : order[d]) {
      t.device_ops[d].push_back(Op{optimizer::op_kind(st.kind), st.stage, st.microbatch});
      t.microbatches = std::max(t.microbatches, st.microbatch + 1);
    }
  }
  return t;
}

}  // namespace

TEST_CASE(
    "optimizer timing model: random offload / recompute plans replay exactly like the engine") {
  const Row row = read_rows().front();
  StageCost c = row_cost(row);
  c.stage_input = Bytes(c.activation.count() / 9);
  const Time comm = Time::from_seconds(row.tcomm * 1e-3);
  const int p = 4, m = 8;
  const Bandwidth link = link_for_k(c, 0.4);
  const optimizer::Problem pr = problem_of(input(p, m, c, comm, 1e9), 1e9, link);
  const optimizer::Order compute = optimizer::handcrafted_order(p, m, 2, 2);  // ZB-H2
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    optimizer::MemoryPlan plan = optimizer::MemoryPlan::keep_all(pr);
    for (std::size_t i = 0; i < plan.choice.size(); ++i) {
      const int draw = std::uniform_int_distribution<int>(0, 3)(rng);
      if (draw == 1) plan.choice[i] = optimizer::ActivationChoice::Recomputed;
      if (draw >= 2) {
        // Offload with a random reload lead, if one leaves the reload after the forward.
        optimizer::MemoryPlan single = optimizer::MemoryPlan::keep_all(pr);
        single.choice[i] = optimizer::ActivationChoice::Offloaded;
        single.reload_lead[i] = std::uniform_int_distribution<int>(1, 4)(rng);
        if (!optimizer::materialize(pr, compute, single)) single.reload_lead[i] = 1;
        if (!optimizer::materialize(pr, compute, single)) continue;
        plan.choice[i] = optimizer::ActivationChoice::Offloaded;
        plan.reload_lead[i] = single.reload_lead[i];
      }
    }
    const auto order = optimizer::materialize(pr, compute, plan);
    REQUIRE(order);
    const optimizer::Evaluation ev = optimizer::evaluate(pr, *order);
    REQUIRE(ev.complete);
    const Table t = table_of(*order);
    SimulationResult r = replay_budget(t, c, comm, Bytes(std::int64_t{1} << 50), link);
    REQUIRE(r.status == RunStatus::Ok);
    CHECK(r.metrics.makespan.ps() == ev.makespan);
    CHECK(r.metrics.stage_span_max.ps() == ev.span_max);
    for (int d = 0; d < p; ++d) {
      // The model takes the worse order of simultaneous copy and compute events, so its peak is
      // never below the engine's.
      CHECK(r.metrics.memory.peak_activation_per_device[static_cast<std::size_t>(d)].count() <=
            ev.peak_bytes[static_cast<std::size_t>(d)]);
    }
    ++checked;
  }
  CHECK(checked == 60);
}

TEST_CASE(
    "optimized with offload: at p M_B and k = 1 the bubble is at most half of 1F1B's on every "
    "row") {
  for (const Row& row : read_rows()) {
    CAPTURE(row.model);
    CAPTURE(row.m);
    const StageCost c = row_cost(row);
    const Time comm = Time::from_seconds(row.tcomm * 1e-3);
    const Bandwidth link = link_for_k(c, 1.0);
    const double units = row.p;
    const GeneratorInput in = offload_input(row, c, units, link, true, false);
    const Generator& g = *registry().find("optimized");
    const Table t = g.generate(in);
    const Bytes budget(static_cast<std::int64_t>(units * c.activation.as_double() + 0.5));
    SimulationResult r = replay_budget(t, c, comm, budget, link);
    REQUIRE(r.status == RunStatus::Ok);  // never over p M_B
    CHECK(r.metrics.bubble_ratio_span <= row.bubble_1f1b / 2);
    // Offload is what makes it possible: ZB-1p (the best at p M_B without it) is above half.
    CHECK(row.zb_1p > row.bubble_1f1b / 2);
    std::int64_t offloads = 0;
    for (const auto& ops : t.device_ops)
      for (const Op& op : ops) offloads += op.kind == OpKind::Offload ? 1 : 0;
    CHECK(offloads > 0);
    // The generator's prediction is the engine's replay.
    const Formula f = g.formula(in);
    CHECK(f.note.find("offloaded") != std::string::npos);
    const optimizer::Problem pr = problem_of(in, units, link);
    const optimizer::Evaluation ev = optimizer::evaluate(pr, order_of(t));
    CHECK(ev.memory_ok);
    CHECK(r.metrics.stage_span_max.ps() == ev.span_max);
  }
}

TEST_CASE("optimized with recompute: a tight limit fits, and beats the order alone") {
  const Row row = read_rows().front();
  StageCost c = row_cost(row);
  c.stage_input = Bytes(c.activation.count() / 16);
  const Time comm = Time::from_seconds(row.tcomm * 1e-3);
  const double units = 2.0;  // two activations per device: the order alone is nearly sequential
  const Bandwidth unused = link_for_k(c, 1.0);
  const Bytes budget(static_cast<std::int64_t>(units * c.activation.as_double() + 0.5));
  const Generator& g = *registry().find("optimized");
  const Table plain = g.generate(offload_input(row, c, units, unused, false, false));
  const Table recomputed = g.generate(offload_input(row, c, units, unused, false, true));
  SimulationResult a = replay_budget(plain, c, comm, budget, unused);
  SimulationResult b = replay_budget(recomputed, c, comm, budget, unused);
  REQUIRE(a.status == RunStatus::Ok);
  REQUIRE(b.status == RunStatus::Ok);
  CHECK(b.metrics.stage_span_max < a.metrics.stage_span_max);
  CHECK(b.metrics.recompute_time > Time::zero());
}

TEST_CASE("optimized with offload needs a host") {
  const Row row = read_rows().front();
  const StageCost c = row_cost(row);
  GeneratorInput in = offload_input(row, c, row.p, link_for_k(c, 1.0), true, false);
  in.offload_d2h.clear();
  in.offload_h2d.clear();
  CHECK_THROWS_WITH_AS(registry().find("optimized")->generate(in),
                       doctest::Contains("needs a host"), ScheduleConstraintError);
}

TEST_CASE("optimizer MILP with offload and recompute: time-indexed, proves a small instance") {
  // Unit costs, 2 M_B per device, offload over a link that copies an activation in one step and
  // recompute (the F keeps a tenth): every decision is in the MILP, which proves its optimum.
  optimizer::Problem pr;
  pr.set_shape(2, 4, optimizer::PlacementKind::Straight);
  const std::int64_t ms = Time::from_seconds(1e-3).ps();
  for (int s = 0; s < 2; ++s) {
    pr.forward_ps.push_back(ms);
    pr.backward_ps.push_back(ms);
    pr.weight_ps.push_back(ms);
    pr.memory_ops.recompute_ps.push_back(ms);
    pr.memory_ops.d2h_ps.push_back(ms);
    pr.memory_ops.h2d_ps.push_back(ms);
    pr.memory.activation_bytes.push_back(1000);
    pr.memory.weight_grad_bytes.push_back(400);
    pr.memory_ops.stage_input_bytes.push_back(100);
  }
  pr.memory.limit_bytes.assign(2, 2000);
  pr.memory_ops.allow_offload = pr.memory_ops.allow_recompute = true;
  optimizer::OptimizeSettings s;
  s.method = optimizer::Method::Milp;
  s.budget_evals = 2000;
  s.time_limit_s = 120;
  const optimizer::OptimizeOutcome out = optimizer::optimize(pr, s);
  REQUIRE(out.feasible);
  if (!optimizer::milp_available()) return;
  // The first device's relaxation bound (first_device_bound.h) already proves the search's
  // result here, so optimize() skips the MILP; run it on its own from that result.
  CHECK(out.proven_optimal);
  CHECK(out.gap == 0.0);
  optimizer::MilpLimits limits;
  limits.seconds = 120;
  const optimizer::MilpResult milp = optimizer::solve_grid_milp(pr, out.order, out.plan, limits);
  CHECK(milp.formulation == "time-indexed");
  CHECK(milp.binaries > 0);
  CHECK(milp.proven_optimal);
  CHECK(milp.best_bound == static_cast<double>(out.cost));
  // The order and plan it returns replay to the predicted cost within the limit.
  const optimizer::Evaluation ev = optimizer::evaluate(pr, out.order);
  CHECK(ev.memory_ok);
  CHECK(ev.objective == out.cost);
}
