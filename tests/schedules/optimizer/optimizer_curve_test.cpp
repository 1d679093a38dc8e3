// The optimizer against the zero-bubble heuristic's own memory curve: at 1x, 1.25x,
// 1.5x, 2x and 3x p M_B on the paper's 1.5B and 6.2B rows, the search is at or below the ZB
// repository's scheduler (tests/data/zb_heuristic_curve.csv) everywhere; wherever that scheduler
// leaves more than 1% of bubble, the search is strictly below it or the certified lower bound shows
// that nothing is (the heuristic's cost is the optimum). A fixed evaluation budget keeps it
// deterministic.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "optimizer_test_support.h"
#include "schedules/optimizer/optimize.h"
#include "tests/engine/engine_test_support.h"
#include "tests/engine/peer_data.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

struct PeerPoint {
  std::string model;
  int m = 0;
  double factor = 0, cost_ms = 0, bubble = 0;
};

std::vector<PeerPoint> peer_curve() {
  std::vector<PeerPoint> out;
  for (const std::vector<std::string>& c : testing::peer_data_rows("zb_heuristic_curve.csv")) {
    REQUIRE(c.size() == 6);
    // The scheduler's cost is in microseconds (Table 9 x 1000).
    out.push_back(
        {c[0], std::stoi(c[2]), std::stod(c[3]), std::stod(c[4]) * 1e-3, std::stod(c[5])});
  }
  return out;
}

}  // namespace

TEST_CASE("optimized: at or below the ZB heuristic at every point of its memory curve") {
  const std::vector<Row> rows = read_rows();
  int above_one_percent = 0, strictly_below = 0, proven_equal = 0;
  for (const PeerPoint& peer : peer_curve()) {
    CAPTURE(peer.model);
    CAPTURE(peer.m);
    CAPTURE(peer.factor);
    const Row* row = nullptr;
    for (const Row& r : rows)
      if (r.model == peer.model && r.m == peer.m) row = &r;
    REQUIRE(row != nullptr);
    const double units = peer.factor * row->p;
    const GeneratorInput in = input(row->p, row->m, row_cost(*row),
                                    Time::from_seconds(row->tcomm * 1e-3), units, "heuristic");
    optimizer::OptimizeSettings s;
    s.method = optimizer::Method::Heuristic;
    s.budget_evals = 8000;
    s.time_limit_s = 600;
    const optimizer::OptimizeOutcome out = optimizer::optimize(problem_of(in, units), s);
    REQUIRE(out.feasible);
    const auto peer_ps = static_cast<std::int64_t>(peer.cost_ms * 1e9 + 0.5);
    CHECK(out.cost <= peer_ps);
    if (peer.bubble <= 0.01) continue;
    ++above_one_percent;
    if (out.cost < peer_ps) {
      ++strictly_below;
    } else {
      // Not below: then the heuristic's cost is the certified lower bound, the optimum.
      CHECK(out.proven_optimal);
      CHECK(out.lower_bound == peer_ps);
      ++proven_equal;
    }
  }
  // 20 points above 1%: 12 where the ZB heuristic is already optimal (1x everywhere; 1.5B m = 24 at
  // 2x and 3x; 6.2B at 1.5x and at 1.25x with m = 24), 8 where the search is strictly below.
  CHECK(above_one_percent == 20);
  CHECK(strictly_below + proven_equal == above_one_percent);
  CHECK(strictly_below >= 8);
}
