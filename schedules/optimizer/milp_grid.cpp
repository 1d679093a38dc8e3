#include "schedules/optimizer/milp_grid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "schedules/optimizer/cbc_deadline.h"
#include "schedules/optimizer/milp_grid_model.h"
#include "schedules/optimizer/timing_model.h"

#if BUBBLESIM_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#endif

namespace bubblesim::optimizer {

std::optional<std::int64_t> time_grid(const Problem& pr, std::int64_t upper) {
  std::int64_t g = 0;
  auto add = [&g](std::int64_t v) { g = std::gcd(g, std::max<std::int64_t>(0, v)); };
  for (std::int32_t s = 0; s < pr.stages; ++s) {
    for (StepKind k : {StepKind::F, StepKind::B, StepKind::W}) add(pr.duration(k, s));
    if (pr.memory_ops.allow_recompute) add(pr.duration(StepKind::R, s));
    if (pr.memory_ops.allow_offload) {
      add(pr.duration(StepKind::O, s));
      add(pr.duration(StepKind::L, s));
    }
    if (s + 1 < pr.stages) {
      add(pr.forward_delay(s));
      add(pr.backward_delay(s));
    }
  }
  if (g <= 0) return std::nullopt;
  std::int64_t offset = 0;  // the latest device's earliest first op
  for (std::int32_t s = 0; s + 1 < pr.stages; ++s)
    offset += pr.forward_ps[static_cast<std::size_t>(s)] + pr.forward_delay(s);
  if ((upper + offset) / g > kMaxGridSteps) return std::nullopt;
  return g;
}

#if !BUBBLESIM_HAVE_CBC

MilpResult solve_grid_milp(const Problem&, const Order&, const MemoryPlan&, const MilpLimits&,
                           std::optional<StepWindow>) {
  MilpResult r;
  r.status = "not built with CBC";
  return r;
}

#else

namespace {

using grid::Job;
using grid::Model;

/// Earliest starts (dependencies only) and tails (longest path from an op's start to the end of
/// everything) of F, B and W, in steps.
struct StartWindows {
  std::vector<std::int64_t> es_f, es_b, es_w, tail_f, tail_b, tail_w;
};

StartWindows windows(const Problem& pr, const Model& gm) {
  const std::int32_t S = pr.stages, m = pr.microbatches;
  auto dur = [&](StepKind k, std::int32_t s) { return gm.steps(pr.duration(k, s)); };
  auto fdelay = [&](std::int32_t s) { return gm.steps(pr.forward_delay(s)); };
  auto bdelay = [&](std::int32_t s) { return gm.steps(pr.backward_delay(s)); };
  const std::size_t n = pr.activations();
  StartWindows w;
  w.es_f.assign(n, 0);
  w.es_b = w.es_w = w.tail_f = w.tail_b = w.tail_w = w.es_f;
  auto i = [&](std::int32_t s, std::int32_t j) { return pr.index(s, j); };
  for (std::int32_t s = 0; s < S; ++s)
    for (std::int32_t j = 0; j < m; ++j) {
      std::int64_t e = 0;
      if (s > 0) e = w.es_f[i(s - 1, j)] + dur(StepKind::F, s - 1) + fdelay(s - 1);
      if (j > 0) e = std::max(e, w.es_f[i(s, j - 1)] + dur(StepKind::F, s));
      w.es_f[i(s, j)] = e;
    }
  for (std::int32_t s = S - 1; s >= 0; --s)
    for (std::int32_t j = 0; j < m; ++j) {
      std::int64_t e = w.es_f[i(s, j)] + dur(StepKind::F, s);
      if (s + 1 < S) e = std::max(e, w.es_b[i(s + 1, j)] + dur(StepKind::B, s + 1) + bdelay(s));
      if (j > 0) e = std::max(e, w.es_b[i(s, j - 1)] + dur(StepKind::B, s));
      w.es_b[i(s, j)] = e;
      std::int64_t ew = e + dur(StepKind::B, s);
      if (j > 0) ew = std::max(ew, w.es_w[i(s, j - 1)] + dur(StepKind::W, s));
      w.es_w[i(s, j)] = ew;
    }
  for (std::int32_t s = 0; s < S; ++s)
    for (std::int32_t j = m - 1; j >= 0; --j)
      w.tail_w[i(s, j)] = dur(StepKind::W, s) + (j + 1 < m ? w.tail_w[i(s, j + 1)] : 0);
  for (std::int32_t s = 0; s < S; ++s)
    for (std::int32_t j = m - 1; j >= 0; --j) {
      std::int64_t t = w.tail_w[i(s, j)];
      if (s > 0) t = std::max(t, bdelay(s - 1) + w.tail_b[i(s - 1, j)]);
      if (j + 1 < m) t = std::max(t, w.tail_b[i(s, j + 1)]);
      w.tail_b[i(s, j)] = dur(StepKind::B, s) + t;
    }
  for (std::int32_t s = S - 1; s >= 0; --s)
    for (std::int32_t j = m - 1; j >= 0; --j) {
      std::int64_t t = w.tail_b[i(s, j)];
      if (s + 1 < S) t = std::max(t, fdelay(s) + w.tail_f[i(s + 1, j)]);
      if (j + 1 < m) t = std::max(t, w.tail_f[i(s, j + 1)]);
      w.tail_f[i(s, j)] = dur(StepKind::F, s) + t;
    }
  return w;
}

constexpr std::int64_t kNoPath = std::numeric_limits<std::int64_t>::min() / 4;

/// Per device d: the longest path from the start of every F, B and W to the end of d's last ops
/// (its stages' W(s, m-1)), or kNoPath.
struct DeviceTails {
  std::vector<std::int64_t> f, b, w;
};

DeviceTails device_tails(const Problem& pr, const Model& gm, std::int32_t d) {
  const std::int32_t S = pr.stages, m = pr.microbatches;
  auto dur = [&](StepKind k, std::int32_t s) { return gm.steps(pr.duration(k, s)); };
  const std::size_t n = pr.activations();
  DeviceTails t{std::vector<std::int64_t>(n, kNoPath), {}, {}};
  t.b = t.w = t.f;
  auto i = [&](std::int32_t s, std::int32_t j) { return pr.index(s, j); };
  auto plus = [](std::int64_t a, std::int64_t b) { return a == kNoPath ? kNoPath : a + b; };
  for (std::int32_t s = 0; s < S; ++s)
    for (std::int32_t j = m - 1; j >= 0; --j) {
      std::int64_t next = (pr.device(s) == d && j == m - 1) ? 0 : kNoPath;
      if (j + 1 < m) next = std::max(next, t.w[i(s, j + 1)]);
      t.w[i(s, j)] = plus(next, dur(StepKind::W, s));
    }
  for (std::int32_t s = 0; s < S; ++s)
    for (std::int32_t j = m - 1; j >= 0; --j) {
      std::int64_t next = t.w[i(s, j)];
      if (s > 0) next = std::max(next, plus(t.b[i(s - 1, j)], gm.steps(pr.backward_delay(s - 1))));
      if (j + 1 < m) next = std::max(next, t.b[i(s, j + 1)]);
      t.b[i(s, j)] = plus(next, dur(StepKind::B, s));
    }
  for (std::int32_t s = S - 1; s >= 0; --s)
    for (std::int32_t j = m - 1; j >= 0; --j) {
      std::int64_t next = t.b[i(s, j)];
      if (s + 1 < S) next = std::max(next, plus(t.f[i(s + 1, j)], gm.steps(pr.forward_delay(s))));
      if (j + 1 < m) next = std::max(next, t.f[i(s, j + 1)]);
      t.f[i(s, j)] = plus(next, dur(StepKind::F, s));
    }
  return t;
}

/// The jobs with their windows and warm-start steps; ops outside `window` keep their steps and an
/// activation with a fixed F or B keeps its decision.
void define_jobs(const Problem& pr, Model& gm, const Evaluation& warm, const MemoryPlan& plan,
                 std::int64_t upper, std::optional<StepWindow> window) {
  const std::int32_t S = pr.stages, m = pr.microbatches;
  const StartWindows w = windows(pr, gm);
  gm.jobs.assign(gm.at(StepKind::L, 1, S - 1, m - 1) + 1, Job{});
  // An engine schedule starts every device's first op, F(first stage, 0), at its earliest step,
  // and with cost `upper` the device's ops end by then plus `upper` (span) or by `upper`.
  const bool span_like = pr.objective == Objective::StageSpan ||
                         (pr.objective == Objective::Iteration && !pr.iteration.global_barrier);
  std::vector<std::int64_t> first_step(static_cast<std::size_t>(pr.devices));
  std::vector<std::int64_t> device_end(static_cast<std::size_t>(pr.devices));
  std::vector<DeviceTails> tails;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    first_step[du] = w.es_f[pr.index(pr.stages_of(d).front(), 0)];
    std::int64_t budget = upper;
    if (pr.objective == Objective::Iteration) budget -= pr.iteration_tail(d);
    device_end[du] = (span_like ? first_step[du] : 0) + budget / gm.grid;
    tails.push_back(device_tails(pr, gm, d));
  }
  auto warm_step = [&](StepKind k, std::int32_t s, std::int32_t j) -> std::int64_t {
    const auto& ends = warm.end[static_cast<int>(k)];
    const std::int64_t e = ends.empty() ? -1 : ends[pr.index(s, j)];
    return e < 0 ? -1 : (e - pr.duration(k, s)) / gm.grid;
  };
  auto in_window = [&](std::int64_t step) {
    return !window || step < 0 || (step >= window->first && step <= window->last);
  };
  for (std::int32_t s = 0; s < S; ++s) {
    for (std::int32_t j = 0; j < m; ++j) {
      const std::size_t a = pr.index(s, j);
      const ActivationChoice choice = plan.choice[a];
      const int warm_mode = choice == ActivationChoice::Recomputed ? 1 : 0;
      const bool free =
          in_window(warm_step(StepKind::F, s, j)) && in_window(warm_step(StepKind::B, s, j));
      const auto du = static_cast<std::size_t>(pr.device(s));
      // The latest start from the device's end: through the op's dependency paths to its last W.
      auto latest = [&](std::int64_t tail, std::int64_t device_tail) {
        std::int64_t l = gm.horizon - tail;
        if (device_tail != kNoPath) l = std::min(l, device_end[du] - device_tail);
        return l;
      };
      auto define = [&](StepKind k, int mode, std::int64_t first, std::int64_t last,
                        bool warm_has_it) {
        Job& jb = gm.job(k, mode, s, j);
        jb.kind = k;
        jb.mode = mode;
        jb.stage = s;
        jb.microbatch = j;
        jb.device = pr.device(s);
        jb.steps = gm.steps(pr.duration(k, s));
        jb.first = first;
        jb.last = last;
        if (span_like && k == StepKind::F && j == 0 && s == pr.stages_of(pr.device(s)).front())
          jb.last = jb.first = first_step[du];
        jb.warm = warm_has_it ? warm_step(k, s, j) : -1;
        if (jb.warm >= 0 && !in_window(jb.warm)) jb.first = jb.last = jb.warm;  // fixed
      };
      const std::int64_t tf = gm.steps(pr.duration(StepKind::F, s));
      const DeviceTails& dt = tails[du];
      const std::int64_t last_f = latest(w.tail_f[a], dt.f[a]);
      const std::int64_t last_b = latest(w.tail_b[a], dt.b[a]);
      if (free || warm_mode == 0) {
        define(StepKind::F, 0, w.es_f[a], last_f, warm_mode == 0);
        define(StepKind::B, 0, w.es_b[a], last_b, warm_mode == 0);
      }
      define(StepKind::W, 0, w.es_w[a], latest(w.tail_w[a], dt.w[a]), true);
      if (pr.memory_ops.allow_recompute && (free || warm_mode == 1)) {
        const std::int64_t tr = gm.steps(pr.duration(StepKind::R, s));
        define(StepKind::F, 1, w.es_f[a], last_f - tr, warm_mode == 1);
        define(StepKind::R, 0, w.es_f[a] + tf, last_b - tr, warm_mode == 1);
        define(StepKind::B, 1, std::max(w.es_b[a], w.es_f[a] + tf + tr), last_b, warm_mode == 1);
      }
      if (pr.memory_ops.allow_offload && (free || choice == ActivationChoice::Offloaded)) {
        const std::int64_t to = gm.steps(pr.duration(StepKind::O, s));
        const std::int64_t tl = gm.steps(pr.duration(StepKind::L, s));
        const bool off = choice == ActivationChoice::Offloaded;
        define(StepKind::O, 0, w.es_f[a] + tf, last_b - tl - to, off);
        define(StepKind::L, 0, w.es_f[a] + tf + to, last_b - tl, off);
      }
    }
  }
}

/// The order and plan of a solution: compute ops by start step; R before its B, O after its F (as
/// materialize places them); a reload after the latest op that starts by its step.
std::optional<Order> read_back(const Problem& pr, const Model& gm, const double* x,
                               MemoryPlan& plan) {
  auto start = [&](const Job& jb) -> std::int64_t {
    if (!jb.present()) return -1;
    for (std::int64_t t = jb.first; t <= jb.last; ++t)
      if (x[jb.col(t)] > 0.5) return t;  // S[t]: started by t
    return -1;
  };
  plan = MemoryPlan::keep_all(pr);
  Order compute(static_cast<std::size_t>(pr.devices));
  std::vector<std::vector<std::pair<std::int64_t, Step> > > timed(compute.size());
  std::vector<std::int64_t> reload_at(pr.activations(), -1);
  for (std::int32_t s = 0; s < pr.stages; ++s) {
    for (std::int32_t j = 0; j < pr.microbatches; ++j) {
      const std::size_t a = pr.index(s, j);
      auto& list = timed[static_cast<std::size_t>(pr.device(s))];
      for (StepKind k : {StepKind::F, StepKind::B, StepKind::W}) {
        std::int64_t t = -1;
        for (int mode : {0, 1}) {
          const std::int64_t tm = start(gm.job(k, mode, s, j));
          if (tm < 0) continue;
          t = tm;
          if (mode == 1) plan.choice[a] = ActivationChoice::Recomputed;
        }
        if (t < 0) return std::nullopt;
        list.push_back({t, Step{k, s, j}});
      }
      const std::int64_t l = start(gm.job(StepKind::L, 0, s, j));
      if (l >= 0) {
        plan.choice[a] = ActivationChoice::Offloaded;
        reload_at[a] = l;
      }
    }
  }
  for (std::size_t d = 0; d < timed.size(); ++d) {
    std::stable_sort(timed[d].begin(), timed[d].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& e : timed[d]) compute[d].push_back(e.second);
    std::vector<std::int32_t> forward_rank(pr.activations(), -1);
    for (std::size_t r = 0; r < timed[d].size(); ++r) {
      const Step st = timed[d][r].second;
      const std::size_t a = pr.index(st.stage, st.microbatch);
      if (st.kind == StepKind::F) forward_rank[a] = static_cast<std::int32_t>(r);
      if (st.kind != StepKind::B || reload_at[a] < 0) continue;
      // The latest op after the F that starts by the reload's step (else the one right after F).
      std::int32_t trigger = forward_rank[a] + 1;
      for (std::int32_t q = forward_rank[a] + 1; q < static_cast<std::int32_t>(r); ++q)
        if (timed[d][static_cast<std::size_t>(q)].first <= reload_at[a]) trigger = q;
      plan.reload_lead[a] = std::max<std::int32_t>(1, static_cast<std::int32_t>(r) - trigger);
    }
  }
  return materialize(pr, compute, plan);
}

}  // namespace

MilpResult solve_grid_milp(const Problem& pr, const Order& warm_start, const MemoryPlan& warm_plan,
                           const MilpLimits& limits, std::optional<StepWindow> window) {
  const auto started = std::chrono::steady_clock::now();
  MilpResult result;
  result.available = true;
  result.formulation = "time-indexed";
  const Evaluation warm = evaluate(pr, warm_start);
  if (!warm.complete || !warm.memory_ok) {
    result.status = "warm start infeasible";
    return result;
  }
  const std::int64_t warm_cost = milp_objective(pr, warm);
  const bool targeted = limits.target > 0 && limits.target < warm_cost;
  const std::int64_t upper = targeted ? limits.target : warm_cost;
  const std::optional<std::int64_t> step = time_grid(pr, upper);
  if (!step) {
    result.status = "no time grid";
    return result;
  }
  Model gm;
  gm.problem = &pr;
  gm.grid = *step;
  // An engine schedule starts every device's first op at its earliest time, so all its ops end by
  // the latest device's earliest start plus the cost.
  std::int64_t offset = 0;
  for (std::int32_t s = 0; s + 1 < pr.stages; ++s)
    offset += gm.steps(pr.forward_ps[static_cast<std::size_t>(s)] + pr.forward_delay(s));
  gm.horizon = offset + upper / gm.grid + 1;
  define_jobs(pr, gm, warm, warm_plan, upper, window);

  const CbcModelOwner owner = cbc_new_model();  // freed on every way out
  auto* model = static_cast<Cbc_Model*>(owner.get());
  int next = 0;
  std::vector<int> start_cols;
  std::vector<double> start_values;
  std::vector<std::vector<double> > ends_at(
      static_cast<std::size_t>(pr.devices),
      std::vector<double>(static_cast<std::size_t>(gm.horizon), 0.0));
  std::vector<std::vector<double> > starts_at = ends_at;
  for (Job& jb : gm.jobs) {
    if (!jb.present()) continue;
    jb.column = next;
    for (std::int64_t t = jb.first; t <= jb.last; ++t) {
      Cbc_addCol(model, "", 0.0, 1.0, 0.0, 1, 0, nullptr, nullptr);
      start_cols.push_back(next++);
      start_values.push_back(jb.warm >= 0 && t >= jb.warm ? 1.0 : 0.0);
    }
    const bool compute = jb.kind != StepKind::O && jb.kind != StepKind::L;
    if (compute && jb.warm >= 0) {
      const auto du = static_cast<std::size_t>(jb.device);
      if (jb.warm < gm.horizon) starts_at[du][static_cast<std::size_t>(jb.warm)] = 1.0;
      if (jb.warm + jb.steps < gm.horizon)
        ends_at[du][static_cast<std::size_t>(jb.warm + jb.steps)] = 1.0;
    }
  }
  result.binaries = next;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    for (auto* cols : {&gm.ends_col, &gm.starts_col}) {
      cols->push_back(next);
      const auto& warm_values = cols == &gm.ends_col ? ends_at : starts_at;
      for (std::int64_t t = 0; t < gm.horizon; ++t) {
        Cbc_addCol(model, "", 0.0, 1.0, 0.0, 0, 0, nullptr, nullptr);
        start_cols.push_back(next++);
        start_values.push_back(
            warm_values[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)]);
      }
    }
  }
  const std::int64_t certified = std::max(lower_bound(pr), limits.known_bound);
  const double lb = std::ceil(static_cast<double>(certified) / static_cast<double>(gm.grid));
  const double ub = static_cast<double>(upper) / static_cast<double>(gm.grid);
  gm.z = next;
  Cbc_addCol(model, "z", std::min(lb, ub), ub, 1.0, 0, 0, nullptr, nullptr);
  start_cols.push_back(gm.z);
  start_values.push_back(ub);
  CbcRows rows;
  bool late = false;  // the deadline passed while the rows were made
  grid::add_rows(gm, [&](const grid::Row& r, char sense, double rhs) {
    if (late || ((rows.size() & 1023) == 0 && (late = passed(limits.deadline)))) return;
    rows.add(static_cast<int>(r.cols.size()), r.cols.data(), r.coefs.data(), sense, rhs);
  });
  if (late) {
    result.status = "time limit while the model was built";
    return result;
  }
  cbc_add_rows(model, rows);
  result.rows = static_cast<std::int64_t>(rows.size());
  if (!targeted)
    Cbc_setMIPStartI(model, static_cast<int>(start_cols.size()), start_cols.data(),
                     start_values.data());
  if (limits.nodes > 0)
    Cbc_setMaximumNodes(model, static_cast<int>(std::min<std::int64_t>(limits.nodes, 1 << 30)));
  // The objective counts whole steps when it has no post-iteration work.
  Cbc_setAllowableGap(model, pr.objective == Objective::Iteration ? 1e-6 : 1.0 - 1e-6);
  if (!cbc_solve_by(model, limits.deadline, limits.seconds)) {
    result.status = "time limit before CBC started";
    return result;
  }

  result.proven_optimal = Cbc_isProvenOptimal(model) != 0;
  result.nodes = Cbc_getNodeCount(model);
  const double bound_steps = Cbc_getBestPossibleObjValue(model);
  // With the iteration objective CBC bounds its stand-in (the first iteration's end), not the
  // objective: only the certified bound counts.
  result.best_bound = static_cast<double>(certified);
  const auto grid_ps = static_cast<double>(gm.grid);
  double cbc_bound = std::ceil(bound_steps - 1e-6) * grid_ps;
  if (result.proven_optimal) cbc_bound = std::round(Cbc_getObjValue(model)) * grid_ps;
  // Targeted, the model holds only the schedules of cost <= target: every other one costs at
  // least a step more (the objective counts whole steps).
  const bool infeasible = targeted && Cbc_isProvenInfeasible(model) != 0;
  if (targeted) {
    const double beyond = static_cast<double>(limits.target) + grid_ps;
    cbc_bound = infeasible ? beyond : std::min(cbc_bound, beyond);
  }
  if (pr.objective != Objective::Iteration)
    result.best_bound = std::max(result.best_bound, cbc_bound);
  const double* sol = Cbc_bestSolution(model);
  if (sol != nullptr) {
    MemoryPlan plan;
    if (std::optional<Order> order = read_back(pr, gm, sol, plan)) {
      TimingModel replay(pr);
      const std::int64_t c = replay.cost(*order);
      if (c < TimingModel::kInfeasible) {
        result.solved = true;
        result.order = std::move(*order);
        result.plan = std::move(plan);
        result.cost = c;
      }
    }
  }
  result.status = infeasible                         ? "infeasible for the target"
                  : result.proven_optimal            ? "optimal"
                  : Cbc_isSecondsLimitReached(model) ? "time limit"
                                                     : "stopped";
  if (result.proven_optimal && pr.objective == Objective::Iteration)
    result.status += " for the first iteration's end";
  if (!result.solved && !infeasible) result.status += ", no solution read back";
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

#endif

}  // namespace bubblesim::optimizer
