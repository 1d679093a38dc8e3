#include "schedules/optimizer/milp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "schedules/optimizer/cbc_deadline.h"
#include "schedules/optimizer/timing_model.h"

#if BUBBLESIM_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#endif

namespace bubblesim::optimizer {

#if !BUBBLESIM_HAVE_CBC

bool milp_available() { return false; }

MilpResult solve_milp(const Problem&, const Order&, const MilpLimits&) {
  MilpResult r;
  r.status = "not built with CBC";
  return r;
}

#else

bool milp_available() { return true; }

namespace {

struct Edge {
  std::int32_t to;
  std::int64_t delay;
};

/// Op ids: kind * (p m) + stage * m + microbatch.
class Graph {
 public:
  explicit Graph(const Problem& pr) : p_(pr.stages), m_(pr.microbatches), n_(3 * p_ * m_) {
    succ_.resize(static_cast<std::size_t>(n_));
    for (std::int32_t s = 0; s < p_; ++s) {
      for (std::int32_t j = 0; j < m_; ++j) {
        if (s + 1 < p_) add(id(StepKind::F, s, j), id(StepKind::F, s + 1, j), pr.forward_delay(s));
        if (j + 1 < m_) {
          add(id(StepKind::F, s, j), id(StepKind::F, s, j + 1), 0);
          add(id(StepKind::B, s, j), id(StepKind::B, s, j + 1), 0);
          add(id(StepKind::W, s, j), id(StepKind::W, s, j + 1), 0);
        }
        add(id(StepKind::F, s, j), id(StepKind::B, s, j), 0);
        if (s > 0) add(id(StepKind::B, s, j), id(StepKind::B, s - 1, j), pr.backward_delay(s - 1));
        add(id(StepKind::B, s, j), id(StepKind::W, s, j), 0);
      }
    }
    // Topological order: F by stage then microbatch, B by stage descending, then W.
    for (std::int32_t s = 0; s < p_; ++s)
      for (std::int32_t j = 0; j < m_; ++j) topo_.push_back(id(StepKind::F, s, j));
    for (std::int32_t s = p_ - 1; s >= 0; --s)
      for (std::int32_t j = 0; j < m_; ++j) topo_.push_back(id(StepKind::B, s, j));
    for (std::int32_t s = 0; s < p_; ++s)
      for (std::int32_t j = 0; j < m_; ++j) topo_.push_back(id(StepKind::W, s, j));
    words_ = (static_cast<std::size_t>(n_) + 63) / 64;
    reach_.assign(static_cast<std::size_t>(n_) * words_, 0);
    for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) {
      const auto v = static_cast<std::size_t>(*it);
      for (const Edge& e : succ_[v]) {
        const auto w = static_cast<std::size_t>(e.to);
        reach_[v * words_ + w / 64] |= std::uint64_t{1} << (w % 64);
        for (std::size_t k = 0; k < words_; ++k) reach_[v * words_ + k] |= reach_[w * words_ + k];
      }
    }
  }
  std::int32_t id(StepKind k, std::int32_t s, std::int32_t j) const {
    return static_cast<std::int32_t>(k) * p_ * m_ + s * m_ + j;
  }
  StepKind kind(std::int32_t v) const { return static_cast<StepKind>(v / (p_ * m_)); }
  std::int32_t stage(std::int32_t v) const { return (v / m_) % p_; }
  std::int32_t microbatch(std::int32_t v) const { return v % m_; }
  bool reaches(std::int32_t u, std::int32_t v) const {
    const auto w = static_cast<std::size_t>(v);
    return (reach_[static_cast<std::size_t>(u) * words_ + w / 64] >> (w % 64)) & 1U;
  }
  std::int32_t size() const { return n_; }
  const std::vector<Edge>& successors(std::int32_t v) const {
    return succ_[static_cast<std::size_t>(v)];
  }
  std::int32_t topo_rank_of(std::int32_t v) const {
    return rank_.empty() ? v : rank_[static_cast<std::size_t>(v)];
  }
  void rank() {
    rank_.assign(static_cast<std::size_t>(n_), 0);
    for (std::size_t i = 0; i < topo_.size(); ++i)
      rank_[static_cast<std::size_t>(topo_[i])] = static_cast<std::int32_t>(i);
  }

 private:
  void add(std::int32_t u, std::int32_t v, std::int64_t delay) {
    succ_[static_cast<std::size_t>(u)].push_back({v, delay});
  }
  std::int32_t p_, m_, n_;
  std::vector<std::vector<Edge> > succ_;
  std::vector<std::int32_t> topo_;
  std::vector<std::int32_t> rank_;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> reach_;
};

}  // namespace

MilpResult solve_milp(const Problem& pr, const Order& warm_start, const MilpLimits& limits) {
  const auto started = std::chrono::steady_clock::now();
  MilpResult result;
  result.available = true;
  const std::int32_t S = pr.stages, p = pr.devices, m = pr.microbatches;
  Graph g(pr);
  g.rank();
  const std::int32_t n = g.size();

  const Evaluation warm = evaluate(pr, warm_start);
  if (!warm.complete || !warm.memory_ok) {
    result.status = "warm start infeasible";
    return result;
  }
  const std::int64_t upper = milp_objective(pr, warm);
  const std::int64_t lb = lower_bound(pr);
  std::int64_t max_duration = 1;
  for (std::int32_t s = 0; s < S; ++s)
    for (StepKind k : {StepKind::F, StepKind::B, StepKind::W})
      max_duration = std::max(max_duration, pr.duration(k, s));
  // Work in units of the longest op so the coefficients stay near 1.
  const double scale = static_cast<double>(max_duration);
  auto t = [scale](std::int64_t ps) { return static_cast<double>(ps) / scale; };
  const double big_m = t(upper + max_duration);
  const bool span_like = pr.objective == Objective::StageSpan ||
                         (pr.objective == Objective::Iteration && !pr.iteration.global_barrier);
  const double horizon = span_like ? t(upper) * S + 1.0 : t(upper);

  const CbcModelOwner owner = cbc_new_model();  // freed on every way out
  auto* model = static_cast<Cbc_Model*>(owner.get());
  auto dur = [&](std::int32_t v) { return pr.duration(g.kind(v), g.stage(v)); };
  // Columns 0..n-1: end times; n: z; then binaries.
  for (std::int32_t v = 0; v < n; ++v)
    Cbc_addCol(model, "", t(dur(v)), horizon, 0.0, 0, 0, nullptr, nullptr);
  const std::int32_t z = n;
  Cbc_addCol(model, "z", t(lb), t(upper), 1.0, 0, 0, nullptr, nullptr);
  std::vector<std::int32_t> pair_u, pair_v;
  std::vector<std::vector<std::int32_t> > device_ops(static_cast<std::size_t>(p));
  for (std::int32_t v = 0; v < n; ++v)
    device_ops[static_cast<std::size_t>(pr.device(g.stage(v)))].push_back(v);
  // x index for an unordered same-device pair (u < v), -1 when the closure fixes the order.
  std::vector<std::int32_t> pair_index(
      static_cast<std::size_t>(n) * static_cast<std::size_t>(3 * m), -1);
  auto local = [m, &g](std::int32_t v) {
    return static_cast<std::int32_t>(g.kind(v)) * m + g.microbatch(v);
  };
  auto slot = [&](std::int32_t u, std::int32_t v) -> std::int32_t& {
    return pair_index[static_cast<std::size_t>(u) * static_cast<std::size_t>(3 * m) +
                      static_cast<std::size_t>(local(v))];
  };
  std::int32_t next_col = n + 1;
  for (const auto& ops : device_ops) {
    for (std::size_t a = 0; a < ops.size(); ++a) {
      for (std::size_t b = a + 1; b < ops.size(); ++b) {
        const std::int32_t u = ops[a], v = ops[b];
        if (g.reaches(u, v) || g.reaches(v, u)) continue;
        pair_u.push_back(u);
        pair_v.push_back(v);
      }
    }
  }
  result.binaries = static_cast<std::int64_t>(pair_u.size());
  // The model grows with the square of the ops per device: p = 32, m = 256 has millions of
  // binaries, which take longer to build than any time limit allows and CBC cannot search.
  if (result.binaries > kMaxBigMBinaries || passed(limits.deadline)) {
    result.status = result.binaries > kMaxBigMBinaries
                        ? fmt::format("not run: {} order binaries, more than the {} it can search",
                                      result.binaries, kMaxBigMBinaries)
                        : "time limit before the model was built";
    return result;
  }
  for (std::size_t k = 0; k < pair_u.size(); ++k) {
    Cbc_addCol(model, "", 0.0, 1.0, 0.0, 1, 0, nullptr, nullptr);
    slot(pair_u[k], pair_v[k]) = next_col++;
  }

  std::vector<int> cols;
  std::vector<double> coefs;
  CbcRows rows;  // added at once (cbc_deadline.h)
  auto row = [&](char sense, double rhs) {
    rows.add(static_cast<int>(cols.size()), cols.data(), coefs.data(), sense, rhs);
    ++result.rows;
    cols.clear();
    coefs.clear();
  };
  // Dependencies.
  for (std::int32_t u = 0; u < n; ++u) {
    for (const Edge& e : g.successors(u)) {
      cols = {e.to, u};
      coefs = {1.0, -1.0};
      row('G', t(e.delay + dur(e.to)));
    }
  }
  // One op at a time.
  for (std::size_t k = 0; k < pair_u.size(); ++k) {
    const std::int32_t u = pair_u[k], v = pair_v[k], x = slot(u, v);
    cols = {v, u, x};  // e_v - e_u - M x >= T_v - M
    coefs = {1.0, -1.0, -big_m};
    row('G', t(dur(v)) - big_m);
    cols = {u, v, x};  // e_u - e_v + M x >= T_u
    coefs = {1.0, -1.0, big_m};
    row('G', t(dur(u)));
  }
  // Memory before every F.
  for (std::int32_t d = 0; d < p; ++d) {
    const auto& ops = device_ops[static_cast<std::size_t>(d)];
    const double limit = static_cast<double>(pr.memory.limit_bytes[static_cast<std::size_t>(d)]);
    for (std::int32_t v : ops) {
      if (g.kind(v) != StepKind::F) continue;
      double constant = static_cast<double>(pr.memory_delta(StepKind::F, g.stage(v)));
      double worst = constant;
      for (std::int32_t u : ops) {
        if (u == v) continue;
        const double delta = static_cast<double>(pr.memory_delta(g.kind(u), g.stage(u)));
        if (delta == 0) continue;
        if (g.reaches(u, v)) {
          constant += delta;
          worst += delta;
        } else if (!g.reaches(v, u)) {
          if (u < v) {  // x_uv = [u before v]
            cols.push_back(slot(u, v));
            coefs.push_back(delta);
          } else {  // [u before v] = 1 - x_vu
            constant += delta;
            cols.push_back(slot(v, u));
            coefs.push_back(-delta);
          }
          worst += std::max(0.0, delta);
        }
      }
      // Bytes are scaled to units of M_B to keep coefficients small.
      const double unit = std::max(
          1.0,
          static_cast<double>(pr.memory.activation_bytes[static_cast<std::size_t>(g.stage(v))]));
      if (worst <= limit) {
        cols.clear();
        coefs.clear();
        continue;
      }
      for (double& c : coefs) c /= unit;
      row('L', (limit - constant) / unit);
    }
  }
  // Objective rows: every stage's last W ends the device's ops; its first op is F(first stage, 0).
  for (std::int32_t d = 0; d < p; ++d) {
    const std::vector<std::int32_t> mine = pr.stages_of(d);
    const std::int32_t first = g.id(StepKind::F, mine.front(), 0);
    const double first_duration = t(pr.forward_ps[static_cast<std::size_t>(mine.front())]);
    const bool from_first = pr.objective == Objective::StageSpan ||
                            (pr.objective == Objective::Iteration && !pr.iteration.global_barrier);
    const double post = pr.objective == Objective::Iteration ? t(pr.iteration_tail(d)) : 0.0;
    for (std::int32_t s : mine) {
      const std::int32_t last = g.id(StepKind::W, s, m - 1);
      if (from_first) {
        cols = {z, last, first};
        coefs = {1.0, -1.0, 1.0};
        row('G', first_duration + post);
      } else {
        cols = {z, last};
        coefs = {1.0, -1.0};
        row('G', post);
      }
    }
  }

  // Warm start: the heuristic's order and times (shifted so that every device's window is valid).
  std::vector<int> start_cols;
  std::vector<double> start_values;
  std::vector<std::int32_t> position(static_cast<std::size_t>(n), 0);
  for (std::int32_t d = 0; d < p; ++d) {
    const auto& ops = warm_start[static_cast<std::size_t>(d)];
    for (std::size_t i = 0; i < ops.size(); ++i)
      position[static_cast<std::size_t>(g.id(ops[i].kind, ops[i].stage, ops[i].microbatch))] =
          static_cast<std::int32_t>(i);
  }
  for (std::size_t k = 0; k < pair_u.size(); ++k) {
    start_cols.push_back(slot(pair_u[k], pair_v[k]));
    start_values.push_back(position[static_cast<std::size_t>(pair_u[k])] <
                                   position[static_cast<std::size_t>(pair_v[k])]
                               ? 1.0
                               : 0.0);
  }
  for (std::int32_t v = 0; v < n; ++v) {
    start_cols.push_back(v);
    start_values.push_back(
        t(warm.end[static_cast<int>(g.kind(v))][pr.index(g.stage(v), g.microbatch(v))]));
  }
  start_cols.push_back(z);
  start_values.push_back(t(upper));
  if (passed(limits.deadline)) {
    result.status = "time limit while the model was built";
    return result;
  }
  cbc_add_rows(model, rows);
  Cbc_setMIPStartI(model, static_cast<int>(start_cols.size()), start_cols.data(),
                   start_values.data());
  if (limits.nodes > 0)
    Cbc_setMaximumNodes(model, static_cast<int>(std::min<std::int64_t>(limits.nodes, 1 << 30)));
  Cbc_setAllowableGap(model, 1e-7);
  if (!cbc_solve_by(model, limits.deadline, limits.seconds)) {
    result.status = "time limit before CBC started";
    return result;
  }

  result.proven_optimal = Cbc_isProvenOptimal(model) != 0;
  result.nodes = Cbc_getNodeCount(model);
  // With the iteration objective CBC bounds its stand-in (the first iteration's end), not the
  // objective: only the certified bound counts.
  result.best_bound = static_cast<double>(lb);
  if (pr.objective != Objective::Iteration)
    result.best_bound = std::max(result.best_bound, Cbc_getBestPossibleObjValue(model) * scale);
  const double* sol = Cbc_bestSolution(model);
  if (sol == nullptr) sol = Cbc_getColSolution(model);
  if (sol != nullptr && Cbc_numberSavedSolutions(model) + (Cbc_bestSolution(model) ? 1 : 0) > 0) {
    Order order(static_cast<std::size_t>(p));
    for (std::int32_t d = 0; d < p; ++d) {
      std::vector<std::int32_t> ops = device_ops[static_cast<std::size_t>(d)];
      std::sort(ops.begin(), ops.end(), [&](std::int32_t a, std::int32_t b) {
        const double sa = sol[a] - t(dur(a)), sb = sol[b] - t(dur(b));
        if (std::abs(sa - sb) > 1e-6) return sa < sb;
        return g.topo_rank_of(a) < g.topo_rank_of(b);
      });
      for (std::int32_t v : ops)
        order[static_cast<std::size_t>(d)].push_back(Step{g.kind(v), g.stage(v), g.microbatch(v)});
    }
    TimingModel model_eval(pr);
    const std::int64_t c = model_eval.cost(order);
    if (c < TimingModel::kInfeasible) {
      result.solved = true;
      result.order = std::move(order);
      result.cost = c;
    }
  }
  result.status = result.proven_optimal              ? "optimal"
                  : Cbc_isSecondsLimitReached(model) ? "time limit"
                                                     : "stopped";
  if (result.proven_optimal && pr.objective == Objective::Iteration)
    result.status += " for the first iteration's end";
  if (!result.solved) result.status += ", no solution read back";
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

#endif

}  // namespace bubblesim::optimizer
