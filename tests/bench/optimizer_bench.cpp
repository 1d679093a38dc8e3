// The optimizer's benchmarks, each a fresh optimizer run per iteration (no
// generator cache):
//   build/bin/bubblesim_bench --benchmark_filter=Optimizer
// - OptimizerZbCurve/...: the bubble at every point of the zero-bubble heuristic's memory curve (1x
//   to 3x p M_B on the paper's models) against the ZB repository's own scheduler
//   (tests/data/zb_heuristic_curve.csv), with a fixed evaluation budget (deterministic);
// - OptimizerTimeLimit/...: p = 16, m = 128, 1.5B costs, 1.25x p M_B: what 0.5 s and 10 s of wall
//   clock give (the anytime search uses its time);
// - OptimizerVAuto/...: V placement against the ZB repository's v_auto_schedule;
// - OptimizerHeuristic, OptimizerOffload, OptimizerMilp*: speed and proof targets.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "bench_support.h"
#include "schedules/optimizer/optimize.h"

namespace {

using namespace bubblesim;

optimizer::Problem problem(int p, int m, double f, double b, double w, double comm_ms,
                           double limit_units, std::int64_t mb = 1000, std::int64_t mw = 400) {
  optimizer::Problem pr;
  pr.set_shape(p, m, optimizer::PlacementKind::Straight);
  pr.set_uniform_comm(Time::from_seconds(comm_ms * 1e-3).ps());
  for (int s = 0; s < p; ++s) {
    pr.forward_ps.push_back(Time::from_seconds(f * 1e-3).ps());
    pr.backward_ps.push_back(Time::from_seconds(b * 1e-3).ps());
    pr.weight_ps.push_back(Time::from_seconds(w * 1e-3).ps());
    pr.memory.activation_bytes.push_back(mb);
    pr.memory.weight_grad_bytes.push_back(mw);
    pr.memory.limit_bytes.push_back(
        static_cast<std::int64_t>(limit_units * static_cast<double>(mb)));
  }
  return pr;
}

/// Runs the optimizer once per benchmark iteration; the last outcome, for the counters.
optimizer::OptimizeOutcome optimize_each(benchmark::State& state, const optimizer::Problem& pr,
                                         const optimizer::OptimizeSettings& s) {
  optimizer::OptimizeOutcome out;
  for (auto _ : state) {
    out = optimizer::optimize(pr, s);
    benchmark::DoNotOptimize(out.cost);
  }
  return out;
}

optimizer::OptimizeSettings settings(optimizer::Method method, double seconds,
                                     std::int64_t evals = 0) {
  optimizer::OptimizeSettings s;
  s.method = method;
  s.time_limit_s = seconds;
  s.budget_evals = evals;
  return s;
}

double bubble_span(const optimizer::Problem& pr, const optimizer::OptimizeOutcome& out) {
  return 1.0 - static_cast<double>(pr.work_ps(0)) / static_cast<double>(out.cost);
}

void counters(benchmark::State& state, const optimizer::Problem& pr,
              const optimizer::OptimizeOutcome& out) {
  state.counters["evaluations"] = static_cast<double>(out.search.evaluations);
  state.counters["restarts"] = static_cast<double>(out.search.restarts);
  state.counters["gap"] = out.gap;
  state.counters["bubble_span"] = bubble_span(pr, out);
}

// ZB Table 9 costs of one row of tests/data/zb_paper_table5_subset.csv and the model's M_W / M_B.
struct ZbRow {
  std::string model;
  int p = 0, m = 0;
  double tf = 0, tb = 0, tw = 0, tc = 0;
};

std::vector<std::string> data_lines(const std::string& file) {
  std::ifstream in(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/" + file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out.push_back(line);
  if (!out.empty()) out.erase(out.begin());  // header
  return out;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> c;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) c.push_back(cell);
  return c;
}

optimizer::Problem zb_problem(const ZbRow& r, double factor) {
  const double h = r.model == "1.5B" ? 2304 : 4096, a = r.model == "1.5B" ? 24 : 32, s = 1024;
  const auto mb = static_cast<std::int64_t>(s * (34 * h + 5 * a * s));
  const auto mw = static_cast<std::int64_t>(32 * s * h);
  return problem(r.p, r.m, r.tf, r.tb, r.tw, r.tc, factor * r.p, mb, mw);
}

void register_zb_curve() {
  std::vector<ZbRow> rows;
  for (const std::string& line : data_lines("zb_paper_table5_subset.csv")) {
    const auto c = cells(line);
    rows.push_back({c[0], std::stoi(c[1]), std::stoi(c[2]), std::stod(c[3]), std::stod(c[4]),
                    std::stod(c[5]), std::stod(c[6])});
  }
  for (const std::string& line : data_lines("zb_heuristic_curve.csv")) {
    const auto c = cells(line);
    const std::string model = c[0];
    const int m = std::stoi(c[2]);
    const double factor = std::stod(c[3]), peer = std::stod(c[5]);
    for (const ZbRow& r : rows) {
      if (r.model != model || r.m != m) continue;
      const std::string name = "OptimizerZbCurve/" + model + "/m" + std::to_string(m) + "/x" + c[3];
      benchmark::RegisterBenchmark(
          name.c_str(),
          [r, factor, peer](benchmark::State& state) {
            const optimizer::Problem pr = zb_problem(r, factor);
            const auto out =
                optimize_each(state, pr, settings(optimizer::Method::Heuristic, 600, 20000));
            counters(state, pr, out);
            state.counters["peer_bubble"] = peer;
            state.counters["below_peer"] = bubble_span(pr, out) < peer - 5e-5 ? 1 : 0;
          })
          ->Unit(benchmark::kSecond)
          ->Iterations(1);
    }
  }
}

const bool zb_curve_registered = (register_zb_curve(), true);

// The anytime search uses its time: p = 16, m = 128, ZB Table 9's 1.5B times, 1.25x p M_B.
void OptimizerTimeLimit(benchmark::State& state) {
  const double seconds = static_cast<double>(state.range(0)) / 10.0;
  const optimizer::Problem pr =
      zb_problem(ZbRow{"1.5B", 16, 128, 18.522, 18.086, 9.337, 0.601}, 1.25);
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Heuristic, seconds));
  counters(state, pr, out);
  state.counters["cost_ms"] = static_cast<double>(out.cost) * 1e-9;
  state.counters["bound_ms"] = static_cast<double>(out.lower_bound) * 1e-9;
}
BENCHMARK(OptimizerTimeLimit)->Arg(5)->Arg(100)->Unit(benchmark::kSecond)->Iterations(1);

void OptimizerHeuristic(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  // ZB Table 9's 1.5B times; limit 2p M_B; a fixed evaluation budget.
  const optimizer::Problem pr = problem(p, m, 18.522, 18.086, 9.337, 0.601, 2.0 * p);
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Heuristic, 600, 2000));
  counters(state, pr, out);
}
BENCHMARK(OptimizerHeuristic)
    ->Args({16, 128})
    ->Args({64, 512})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// The search with offload and recompute decisions: limit p M_B, PCIe copy of one M_B taking
// T_F + T_B + T_W (PipeOffload's k = 1), a recomputed F keeping a tenth of M_B.
void OptimizerOffload(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  optimizer::Problem pr = problem(p, m, 18.522, 18.086, 9.337, 0.601, p);
  pr.memory_ops.allow_offload = pr.memory_ops.allow_recompute = true;
  const std::int64_t copy = pr.forward_ps[0] + pr.backward_ps[0] + pr.weight_ps[0];
  pr.memory_ops.d2h_ps.assign(static_cast<std::size_t>(p), copy);
  pr.memory_ops.h2d_ps.assign(static_cast<std::size_t>(p), copy);
  pr.memory_ops.recompute_ps = pr.forward_ps;
  pr.memory_ops.stage_input_bytes.assign(static_cast<std::size_t>(p), 100);
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Heuristic, 600, 20000));
  counters(state, pr, out);
  state.counters["offloaded"] =
      static_cast<double>(out.plan.count(optimizer::ActivationChoice::Offloaded));
  state.counters["recomputed"] =
      static_cast<double>(out.plan.count(optimizer::ActivationChoice::Recomputed));
}
BENCHMARK(OptimizerOffload)
    ->Args({8, 24})
    ->Args({16, 128})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

void OptimizerMilpProof(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  const optimizer::Problem pr = problem(p, m, 1, 1, 1, 0, p);
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Milp, 60, 2000));
  state.counters["proven_optimal"] = out.proven_optimal ? 1 : 0;
  state.counters["gap"] = out.gap;
}
BENCHMARK(OptimizerMilpProof)->Args({8, 16})->Unit(benchmark::kSecond)->Iterations(1);

// The proof target: p = 4, m = 8 (and m = 4), unit costs, the limit half of 1F1B's memory
// (2 M_B on every device, 1F1B needs p), offload (one M_B copied in one unit each way) and
// recompute (R = F, a tenth of M_B kept) allowed: the time-indexed MILP decides keep / offload /
// recompute.
void OptimizerMilpOffloadProof(benchmark::State& state) {
  const int p = 4, m = static_cast<int>(state.range(0));
  optimizer::Problem pr = problem(p, m, 1, 1, 1, 0, 0.5 * p);
  pr.memory_ops.allow_offload = pr.memory_ops.allow_recompute = true;
  pr.memory_ops.d2h_ps = pr.memory_ops.h2d_ps = pr.forward_ps;
  pr.memory_ops.recompute_ps = pr.forward_ps;
  pr.memory_ops.stage_input_bytes.assign(static_cast<std::size_t>(p), 100);
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Milp, 60, 2000));
  state.counters["proven_optimal"] = out.proven_optimal ? 1 : 0;
  state.counters["gap"] = out.gap;
  state.counters["cost_units"] =
      static_cast<double>(out.cost) / static_cast<double>(pr.forward_ps[0]);
  state.counters["bound_units"] =
      static_cast<double>(out.best_bound) / static_cast<double>(pr.forward_ps[0]);
  state.counters["binaries"] = static_cast<double>(out.milp.binaries);
  state.counters["milp_s"] = out.milp.seconds;
  state.counters["milp_nodes"] = static_cast<double>(out.milp.nodes);
  state.SetLabel(out.milp.status);
  state.counters["offloaded"] =
      static_cast<double>(out.plan.count(optimizer::ActivationChoice::Offloaded));
  state.counters["recomputed"] =
      static_cast<double>(out.plan.count(optimizer::ActivationChoice::Recomputed));
}
BENCHMARK(OptimizerMilpOffloadProof)->Arg(4)->Arg(8)->Unit(benchmark::kSecond)->Iterations(1);

// V placement against the ZB repository's v_auto_schedule
// (tests/bench/peers/zb_v_auto_schedule.py): p, m, costs (0: unit F = B = W = 1, delay 0; 1: F 2, B
// 3, W 1, delay 1, per chunk), and the limit in quarters of 1F1B's memory p M_B; M_W = M_B as the
// peer counts memory (F +1, W -1 per chunk).
void OptimizerVAuto(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  const bool unequal = state.range(2) != 0;
  const double factor = static_cast<double>(state.range(3)) / 4.0;
  const std::int64_t f = unequal ? 2 : 1, b = unequal ? 3 : 1, w = 1, c = unequal ? 1 : 0;
  const std::int64_t unit = Time::from_seconds(1e-3).ps();
  optimizer::Problem pr;
  pr.set_shape(p, m, optimizer::PlacementKind::V);
  pr.set_uniform_comm(c * unit);
  for (int s = 0; s < 2 * p; ++s) {
    pr.forward_ps.push_back(f * unit);
    pr.backward_ps.push_back(b * unit);
    pr.weight_ps.push_back(w * unit);
    pr.memory.activation_bytes.push_back(500);  // a chunk holds half of the device's M_B
    pr.memory.weight_grad_bytes.push_back(500);
  }
  pr.memory.limit_bytes.assign(static_cast<std::size_t>(p),
                               static_cast<std::int64_t>(factor * p * 1000));
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Heuristic, 600, 20000));
  state.counters["span_units"] = static_cast<double>(out.cost) / static_cast<double>(unit);
  state.counters["bound_units"] = static_cast<double>(out.lower_bound) / static_cast<double>(unit);
}
BENCHMARK(OptimizerVAuto)
    ->ArgsProduct({{4}, {8, 16}, {0, 1}, {2, 3, 4}})
    ->Args({8, 16, 0, 2})
    ->Args({8, 16, 0, 3})
    ->Args({8, 16, 0, 4})
    ->Args({8, 16, 1, 2})
    ->Args({8, 16, 1, 3})
    ->Args({8, 16, 1, 4})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// Uneven stage costs, so the search does not meet the certified bound and CBC has to work.
void OptimizerMilpUneven(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  optimizer::Problem pr = problem(p, m, 1.0, 1.3, 0.7, 0.1, p);
  for (int s = 0; s < p; ++s)
    pr.forward_ps[static_cast<std::size_t>(s)] += Time::from_seconds(s * 0.05e-3).ps();
  const auto out = optimize_each(state, pr, settings(optimizer::Method::Milp, 60, 2000));
  state.counters["proven_optimal"] = out.proven_optimal ? 1 : 0;
  state.counters["gap"] = out.gap;
  state.counters["binaries"] = static_cast<double>(out.milp.binaries);
  state.counters["milp_s"] = out.milp.seconds;
}
BENCHMARK(OptimizerMilpUneven)
    ->Args({4, 8})
    ->Args({8, 16})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
