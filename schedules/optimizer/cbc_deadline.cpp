#include "schedules/optimizer/cbc_deadline.h"

#include <algorithm>
#include <limits>
#include <string>

#if BUBBLESIM_HAVE_CBC
#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/OsiClpSolverInterface.hpp>
// The C interface's model struct (Coin_C_defines.h, under CBC_EXTERN_C) holds the CbcModel and
// its OsiClpSolverInterface; their event handlers are not reachable through the C functions.
#define CBC_EXTERN_C
#include <coin/Cbc_C_Interface.h>
#endif

namespace bubblesim::optimizer {

void CbcRows::add(int count, const int* cols, const double* coefs, char sense, double rhs) {
  constexpr double kInf = std::numeric_limits<double>::max();
  columns.insert(columns.end(), cols, cols + count);
  elements.insert(elements.end(), coefs, coefs + count);
  starts.push_back(static_cast<int>(columns.size()));
  lower.push_back(sense == 'L' ? -kInf : rhs);
  upper.push_back(sense == 'G' ? kInf : rhs);
}

#if BUBBLESIM_HAVE_CBC
namespace {

/// Stops the simplex (any of CBC's LP solves: the first relaxation, the cut loop, the nodes)
/// at the end of the first iteration past the deadline.
class ClpDeadline : public ClpEventHandler {
 public:
  explicit ClpDeadline(Clock::time_point deadline) : deadline_(deadline) {}
  int event(Event which) override {
    if (which != endOfIteration && which != endOfFactorization) return -1;
    return passed(deadline_) ? 0 : -1;  // 0: stop, status "stopped by event handler"
  }
  ClpEventHandler* clone() const override { return new ClpDeadline(*this); }

 private:
  Clock::time_point deadline_;
};

/// Stops the branch and bound at the next node, tree status or heuristic pass past the deadline.
class CbcDeadline : public CbcEventHandler {
 public:
  explicit CbcDeadline(Clock::time_point deadline) : deadline_(deadline) {}
  CbcAction event(CbcEvent which) override {
    const bool checkpoint =
        which == node || which == treeStatus || which == afterHeuristic || which == heuristicPass;
    return checkpoint && passed(deadline_) ? stop : noAction;
  }
  CbcEventHandler* clone() const override { return new CbcDeadline(*this); }

 private:
  Clock::time_point deadline_;
};

}  // namespace

void CbcModelDeleter::operator()(void* model) const {
  Cbc_deleteModel(static_cast<Cbc_Model*>(model));
}

CbcModelOwner cbc_new_model() {
  Cbc_Model* model = Cbc_newModel();
  Cbc_setLogLevel(model, 0);
  return CbcModelOwner(model);
}

void cbc_add_rows(void* handle, const CbcRows& rows) {
  auto* model = static_cast<Cbc_Model*>(handle);
  if (rows.size() == 0) return;
  (void)Cbc_getNumIntegers(model);  // moves the columns the C interface buffers into the solver
  model->model_->solver()->addRows(static_cast<int>(rows.size()), rows.starts.data(),
                                   rows.columns.data(), rows.elements.data(), rows.lower.data(),
                                   rows.upper.data());
}

bool cbc_solve_by(void* handle, Clock::time_point deadline, double max_seconds) {
  auto* model = static_cast<Cbc_Model*>(handle);
  const double seconds = std::min(max_seconds, seconds_left(deadline));
  if (seconds <= 0) return false;
  const Clock::time_point stop = std::min(deadline, deadline_after(std::max(seconds, 0.01)));
  // Elapsed time, not CPU time: on a loaded machine the CPU clock runs slower than the wall.
  Cbc_setParameter(model, "timeMode", "elapsed");
  Cbc_setMaximumSeconds(model, std::max(0.01, seconds));
  const ClpDeadline lp(stop);
  model->solver_->getModelPtr()->passInEventHandler(&lp);  // cloned into every copy CBC makes
  const CbcDeadline tree(stop);
  model->model_->passInEventHandler(&tree);
  Cbc_solve(model);
  return true;
}
#else
void CbcModelDeleter::operator()(void*) const {}
CbcModelOwner cbc_new_model() { return CbcModelOwner(nullptr); }
void cbc_add_rows(void*, const CbcRows&) {}
bool cbc_solve_by(void*, Clock::time_point, double) { return false; }
#endif

}  // namespace bubblesim::optimizer
