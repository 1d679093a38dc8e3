#pragma once
// CBC that returns by a wall-clock deadline, as users read `time_limit`. CBC's own time limit
// counts CPU seconds by default and is checked between branch-and-bound nodes, so a first LP
// relaxation that takes minutes (the time-indexed MILP at p = 4, m = 8 with a budget that holds
// every microbatch) ran far past `time_limit`. `solve_by` sets the limit in elapsed time and
// installs event handlers on the branch and bound (CbcEventHandler: every node, tree status and
// heuristic pass) and on the LP solver (ClpEventHandler: every simplex iteration), which stop the
// run once the deadline has passed. A stopped run keeps what it found; without a solution the
// caller keeps its warm start.

#include <memory>
#include <vector>

#include "schedules/optimizer/deadline.h"

namespace bubblesim::optimizer {

/// Deletes a Cbc_Model* (Cbc_deleteModel).
struct CbcModelDeleter {
  void operator()(void* model) const;
};
/// Owns one CBC model of the C interface (a Cbc_Model*, held as void* so that this header needs
/// no COIN-OR header): every way out of a MILP driver frees it, the early ones included.
using CbcModelOwner = std::unique_ptr<void, CbcModelDeleter>;

/// A new CBC model that logs nothing (Cbc_newModel with log level 0).
CbcModelOwner cbc_new_model();

/// Rows to add to a CBC model at once. Cbc_addRow appends one row to the column-major matrix at a
/// time, which copies the matrix again and again: on the time-indexed MILP's windows building the
/// model took longer than CBC's whole run.
struct CbcRows {
  std::vector<int> starts{0}, columns;
  std::vector<double> elements, lower, upper;
  /// A row `cols . coefs (sense) rhs`, sense 'L' (<=), 'G' (>=) or 'E' (=).
  void add(int count, const int* cols, const double* coefs, char sense, double rhs);
  std::size_t size() const { return lower.size(); }
};

/// Adds `rows` to `model` (a Cbc_Model*) after its columns.
void cbc_add_rows(void* model, const CbcRows& rows);

/// Cbc_solve(model) (`model` is a Cbc_Model*) that stops at `deadline`, and at `max_seconds` of
/// elapsed time if that comes first. Returns false without solving when the deadline has passed
/// already.
bool cbc_solve_by(void* model, Clock::time_point deadline, double max_seconds);

}  // namespace bubblesim::optimizer
