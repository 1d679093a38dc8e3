// V placement against the ZB repository's v_auto_schedule: at p = 4, m = 8, on unit and
// unequal per-chunk costs and at 0.5x, 0.75x and 1x of 1F1B's memory, the search is at or below
// that scheduler's span (tests/data/zb_v_auto_schedule.csv); at 0.75x with unit costs it reaches
// the peer's 53 only through the repaired building blocks (warm-up repacked, cool-down rebuilt),
// so the passes themselves are checked too. A fixed evaluation budget keeps it deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "schedules/optimizer/building_blocks.h"
#include "schedules/optimizer/cool_down.h"
#include "schedules/optimizer/optimize.h"
#include "schedules/optimizer/seeds.h"
#include "schedules/optimizer/timing_model.h"
#include "schedules/optimizer/warm_up.h"
#include "tests/engine/peer_data.h"

using namespace bubblesim;
using namespace bubblesim::optimizer;

namespace {

constexpr std::int64_t kUnit = 1000000;  // ps per cost unit
constexpr std::int64_t kEvaluations = 3000;

struct PeerRow {
  int p = 0, m = 0, f = 0, b = 0, w = 0, c = 0;
  double factor = 0;
  std::int64_t span = 0;
};

std::vector<PeerRow> peer_rows(const std::string& file = "zb_v_auto_schedule.csv") {
  std::vector<PeerRow> out;
  for (const std::vector<std::string>& c : testing::peer_data_rows(file)) {
    REQUIRE(c.size() >= 8);
    out.push_back({std::stoi(c[0]), std::stoi(c[1]), std::stoi(c[2]), std::stoi(c[3]),
                   std::stoi(c[4]), std::stoi(c[5]), std::stod(c[6]), std::stoll(c[7])});
  }
  return out;
}

/// V placement with per-chunk costs in units and the peer's memory count (a chunk's F +1, its W
/// -1: M_W = M_B), the limit `factor` x 1F1B's p M_B = 2p chunk activations.
Problem v_problem(const PeerRow& r) {
  Problem pr;
  pr.set_shape(r.p, r.m, PlacementKind::V);
  pr.set_uniform_comm(r.c * kUnit);
  for (int s = 0; s < 2 * r.p; ++s) {
    pr.forward_ps.push_back(r.f * kUnit);
    pr.backward_ps.push_back(r.b * kUnit);
    pr.weight_ps.push_back(r.w * kUnit);
    pr.memory.activation_bytes.push_back(500);
    pr.memory.weight_grad_bytes.push_back(500);
  }
  pr.memory.limit_bytes.assign(static_cast<std::size_t>(r.p),
                               static_cast<std::int64_t>(r.factor * r.p * 1000));
  return pr;
}

OptimizeOutcome run(const Problem& pr) {
  OptimizeSettings s;
  s.method = Method::Heuristic;
  s.time_limit_s = 600;
  s.budget_evals = kEvaluations;
  return optimize(pr, s);
}

PeerRow row(int p, int m, bool unit, double factor) {
  for (const PeerRow& r : peer_rows())
    if (r.p == p && r.m == m && (r.f == 1) == unit && r.factor == factor) return r;
  FAIL("no peer row");
  return {};
}

}  // namespace

TEST_CASE("optimized, placement v: at or below v_auto_schedule at p 4, m 8 on every limit") {
  int checked = 0;
  for (const PeerRow& r : peer_rows()) {
    if (r.p != 4 || r.m != 8) continue;
    CAPTURE(r.f);
    CAPTURE(r.factor);
    const Problem pr = v_problem(r);
    const OptimizeOutcome out = run(pr);
    REQUIRE(out.feasible);
    const Evaluation ev = evaluate(pr, out.order);
    CHECK(ev.complete);
    CHECK(ev.memory_ok);
    CHECK(ev.span_max == out.cost);
    CHECK(out.cost <= r.span * kUnit);
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("optimized, placement v: the repaired building blocks reach the peer at 0.75x, unit") {
  const PeerRow r = row(4, 8, true, 0.75);
  const Problem pr = v_problem(r);
  const BlockOrders blocks = building_block_orders(pr, 12);
  REQUIRE(!blocks.repaired.empty());
  TimingModel model(pr);
  std::int64_t plain = TimingModel::kInfeasible, repaired = TimingModel::kInfeasible;
  for (const Order& o : blocks.plain) plain = std::min(plain, model.cost(o));
  for (const Order& o : blocks.repaired) repaired = std::min(repaired, model.cost(o));
  CHECK(repaired <= r.span * kUnit);
  CHECK(repaired < plain);  // the repairs, not the plain blocks, make it
  // The search's result (deterministic for a seed and budget) is at least as good.
  const OptimizeOutcome a = run(pr), b = run(pr);
  CHECK(a.cost <= repaired);
  CHECK(a.order == b.order);
}

TEST_CASE("optimized, placement v: the warm-up repack and the cool-down rebuild") {
  const Problem pr = v_problem(row(4, 8, true, 0.75));
  const std::int32_t p = pr.devices;
  for (const Seed& seed : seed_orders(pr)) {
    if (seed.name.rfind("building block", 0) != 0) continue;
    CAPTURE(seed.name);
    const Evaluation before = evaluate(pr, seed.order);
    REQUIRE(before.complete);
    const auto packed = repack_warm_up(pr, seed.order);
    REQUIRE(packed.has_value());
    for (std::int32_t d = 0; d < p; ++d) {
      const auto& old_ops = seed.order[static_cast<std::size_t>(d)];
      const auto& ops = (*packed)[static_cast<std::size_t>(d)];
      REQUIRE(ops.size() == old_ops.size());
      // Up to the first B of the device's first stage the same ops, forwards first; after it,
      // the same order.
      auto first_b = [d](const std::vector<Step>& v) {
        return std::find_if(
                   v.begin(), v.end(),
                   [d](const Step& st) { return st.kind == StepKind::B && st.stage == d; }) -
               v.begin();
      };
      const auto cut = first_b(ops);
      REQUIRE(cut == first_b(old_ops));
      CHECK(std::is_permutation(ops.begin(), ops.begin() + cut, old_ops.begin()));
      CHECK(std::equal(ops.begin() + cut, ops.end(), old_ops.begin() + cut));
      CHECK(ops.front().kind == StepKind::F);
      const auto second_f =
          std::count_if(ops.begin(),
                        std::find_if(ops.begin(), ops.end(),
                                     [](const Step& st) { return st.kind == StepKind::B; }),
                        [d](const Step& st) { return st.kind == StepKind::F && st.stage != d; });
      CHECK(second_f <= d + 1);
    }
    const auto rebuilt = rebuild_cool_down(pr, *packed);
    REQUIRE(rebuilt.has_value());
    const Evaluation packed_ev = evaluate(pr, *packed), after = evaluate(pr, *rebuilt);
    CHECK(after.complete);
    for (std::int32_t d = 0; d < p; ++d) {
      const auto du = static_cast<std::size_t>(d);
      const auto& ops = (*packed)[du];
      const auto& now = (*rebuilt)[du];
      // Up to the last F unchanged, the rest the same ops in another order, the peak not raised.
      const auto last_f = std::find_if(ops.rbegin(), ops.rend(),
                                       [](const Step& st) { return st.kind == StepKind::F; })
                              .base() -
                          ops.begin();
      REQUIRE(now.size() == ops.size());
      CHECK(std::equal(ops.begin(), ops.begin() + last_f, now.begin()));
      CHECK(std::is_permutation(ops.begin() + last_f, ops.end(), now.begin() + last_f));
      CHECK(after.peak_bytes[du] <= packed_ev.peak_bytes[du]);
    }
  }
}

TEST_CASE("optimized, placement v: at or below v_auto_schedule on the wider grid up to p 4") {
  // p 2, 3 and 4, m 4 to 24, unit and unequal costs, three limits (tests/data/
  // zb_v_auto_schedule_grid.csv): every point the peer serves, at the test's evaluation budget.
  // p 6 and 8 take 20000 evaluations (docs/optimizer.md, the V-placement grid; the bench).
  int checked = 0;
  for (const PeerRow& r : peer_rows("zb_v_auto_schedule_grid.csv")) {
    if (r.p > 4) continue;
    CAPTURE(r.p);
    CAPTURE(r.m);
    CAPTURE(r.f);
    CAPTURE(r.factor);
    const Problem pr = v_problem(r);
    const OptimizeOutcome out = run(pr);
    REQUIRE(out.feasible);
    CHECK(out.cost <= r.span * kUnit);
    ++checked;
  }
  CHECK(checked == 60);
}
