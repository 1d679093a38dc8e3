#pragma once
// Internal to the time-indexed MILP (milp_grid.h): its ops ("jobs") with their step windows and
// columns, shared by the model's construction (milp_grid.cpp) and its rows (milp_grid_rows.cpp).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer::grid {

/// One op of the model: F and B in two modes (0: kept or offloaded, 1: recomputed), W, R, O, L.
struct Job {
  StepKind kind = StepKind::F;
  int mode = 0;
  std::int32_t stage = 0, microbatch = 0, device = 0;
  std::int64_t steps = 0;  // duration in steps
  std::int64_t first = 0;  // earliest start step
  std::int64_t last = -1;  // latest start step (last < first: not in the model)
  int column = -1;         // column of S[first]: S[t] = 1 when the op has started by step t
  std::int64_t warm = -1;  // warm-start step, -1 when absent from the warm start
  bool present() const { return last >= first; }
  int col(std::int64_t t) const { return column + static_cast<int>(t - first); }
};

struct Model {
  const Problem* problem = nullptr;
  std::int64_t grid = 1;     // ps per step
  std::int64_t horizon = 0;  // steps
  std::vector<Job> jobs;
  int z = -1;  // objective column
  // Per device, the first of `horizon` continuous columns: some compute op ends / starts at t.
  std::vector<int> ends_col, starts_col;

  std::size_t at(StepKind k, int mode, std::int32_t s, std::int32_t j) const {
    const auto S = static_cast<std::size_t>(problem->stages);
    const auto m = static_cast<std::size_t>(problem->microbatches);
    return ((static_cast<std::size_t>(k) * 2 + static_cast<std::size_t>(mode)) * S +
            static_cast<std::size_t>(s)) *
               m +
           static_cast<std::size_t>(j);
  }
  Job& job(StepKind k, int mode, std::int32_t s, std::int32_t j) { return jobs[at(k, mode, s, j)]; }
  const Job& job(StepKind k, int mode, std::int32_t s, std::int32_t j) const {
    return jobs[at(k, mode, s, j)];
  }
  std::int64_t steps(std::int64_t ps) const { return ps / grid; }
};

/// A sparse row under construction: coefficients by column, then sense and right-hand side.
struct Row {
  std::vector<int> cols;
  std::vector<double> coefs;
  void add(int c, double v) {
    cols.push_back(c);
    coefs.push_back(v);
  }
  /// One entry per column (coefficients added up, zeros dropped), as the solver expects.
  void merge() {
    std::vector<std::pair<int, double>> e;
    for (std::size_t k = 0; k < cols.size(); ++k) e.emplace_back(cols[k], coefs[k]);
    std::sort(e.begin(), e.end());
    cols.clear();
    coefs.clear();
    for (std::size_t k = 0; k < e.size();) {
      double sum = 0;
      const int c = e[k].first;
      for (; k < e.size() && e[k].first == c; ++k) sum += e[k].second;
      if (sum != 0) add(c, sum);
    }
  }
  /// + coef [j started by step t] (S[t]: 0 before its window, S[last] after it).
  void started(const Job& j, std::int64_t t, double coef) {
    if (!j.present() || t < j.first) return;
    add(j.col(std::min(t, j.last)), coef);
  }
  /// + coef [j started at or before `to` and after `from`].
  void started_between(const Job& j, std::int64_t from, std::int64_t to, double coef) {
    started(j, to, coef);
    started(j, from, -coef);
  }
  /// + coef [j starts exactly at step t] (S[t] - S[t-1]).
  void starts_at(const Job& j, std::int64_t t, double coef) {
    if (!j.present() || t < j.first || t > j.last) return;
    add(j.col(t), coef);
    if (t > j.first) add(j.col(t - 1), -coef);
  }
  /// + coef [j ends exactly at step t].
  void ends_at(const Job& j, std::int64_t t, double coef) { starts_at(j, t - j.steps, coef); }
};

/// Adds every constraint of the model through `emit(row, sense, rhs)` (sense 'L', 'G' or 'E').
void add_rows(const Model& model, const std::function<void(const Row&, char, double)>& emit);

}  // namespace bubblesim::optimizer::grid
