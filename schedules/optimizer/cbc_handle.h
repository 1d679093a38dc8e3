#pragma once
// One CBC model for the two MILP drivers (milp.cpp: order binaries; milp_grid.cpp: a
// time-indexed grid), owned by a handle that deletes it on every path out, with the rows added in
// bulk and a solve that returns by a wall-clock deadline.
//
// Why the deadline needs more than CBC's own limit: CBC's time limit counts CPU seconds by
// default and is checked between branch-and-bound nodes, so a first LP relaxation that takes
// minutes (the time-indexed MILP at p = 4, m = 8 with a budget that holds every microbatch) ran
// far past the limit. `solve_by` sets the limit in elapsed time and installs event handlers on
// the branch and bound (CbcEventHandler: every node, tree status and heuristic pass) and on the LP
// solver (ClpEventHandler: every simplex iteration), which stop the run once the deadline has
// passed. A stopped run keeps what it found; without a solution the caller keeps its warm start.
// Only built with CBC (BUBBLESIM_HAVE_CBC); the drivers are stubs without it.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/optimizer/deadline.h"

namespace bubblesim::optimizer {

/// Rows to add to a model at once. CBC's C interface appends one row to the column-major matrix
/// at a time, copying the matrix again and again: on the time-indexed MILP's windows building the
/// model took longer than CBC's whole run.
struct CbcRows {
  std::vector<int> starts{0}, columns;
  std::vector<double> elements, lower, upper;
  /// A row `cols . coefs (sense) rhs`, sense 'L' (<=), 'G' (>=) or 'E' (=).
  void add(int count, const int* cols, const double* coefs, char sense, double rhs);
  std::size_t size() const { return lower.size(); }
};

class CbcHandle {
 public:
  CbcHandle();  // an empty model, CBC's log off
  ~CbcHandle();
  CbcHandle(const CbcHandle&) = delete;
  CbcHandle& operator=(const CbcHandle&) = delete;

  /// Adds a column (minimised with `objective` as its cost) and returns its index.
  int add_column(double lower, double upper, double objective, bool integer);
  /// Columns added so far (the index the next one gets).
  int columns() const { return columns_; }
  /// Adds `rows` after the columns.
  void add_rows(const CbcRows& rows);
  /// A warm start: `values[k]` for column `columns[k]`.
  void set_start(const std::vector<int>& columns, const std::vector<double>& values);
  /// Stops after `nodes` branch-and-bound nodes (0: no limit) and at a relative gap of `gap`.
  void set_limits(std::int64_t nodes, double gap);

  /// Solves, stopping at `deadline` and at `max_seconds` of elapsed time if that comes first.
  /// Returns false without solving when the deadline has passed already.
  bool solve_by(Clock::time_point deadline, double max_seconds);

  bool proven_optimal() const;
  bool proven_infeasible() const;
  std::int64_t nodes() const;
  double objective() const;
  double best_possible() const;  // CBC's bound on the objective
  /// The best integer solution found, one value per column; nullptr when there is none.
  const double* best_solution() const;
  /// Why the solve ended: "optimal", "time limit" (elapsed seconds or the deadline) or "stopped"
  /// (the node limit, or no solution improved within it).
  std::string stop_reason() const;

 private:
  void* model_;  // Cbc_Model*: the C interface's type, kept out of this header
  int columns_ = 0;
};

}  // namespace bubblesim::optimizer
