// One rule set, checked against itself: the replay's rules are written out in several places
// (the event loop, the list replay's general and tight loops, the streamed replay and the
// optimizer's timing model). Thousands of random small cases (p 1-4, m 1-6, straight, looped and
// V placements, random per-stage costs in picoseconds, no communication or a random fixed delay,
// unsplit, split or partly split backwards, random valid orders, stragglers) are replayed by
// every path that covers the case, and every pair must agree exactly: every op's start and end,
// the makespan, per-device peaks, exposed communication, the event count. A rule changed in one
// place and not in the others fails here.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine_test_support.h"
#include "result_fingerprint.h"
#include "schedules/optimizer/timing_model.h"
#include "schedules/order_stream.h"
#include "sim/engine/stream_replay.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

enum class Split { None, All, Mixed };
enum class Shape { Straight, Looped, V };

struct Case {
  std::int32_t p = 1, m = 1;
  Shape shape = Shape::Straight;
  Split split = Split::None;
  bool in_order = false;       // each stage's F and B in increasing microbatch order
  std::int64_t delay_ps = -1;  // < 0: no communication cost at all
  bool stragglers = false;
  std::string describe() const {
    return fmt::format("p {} m {} shape {} split {} in_order {} delay {} ps stragglers {}", p, m,
                       static_cast<int>(shape), static_cast<int>(split), in_order, delay_ps,
                       stragglers);
  }
};

Placement placement_of(const Case& c) {
  switch (c.shape) {
    case Shape::Straight:
      return Placement::straight(c.p);
    case Shape::Looped:
      return Placement::loop(c.p, 2 * c.p);
    case Shape::V:
      return Placement::v_shape(c.p);
  }
  return Placement::straight(c.p);
}

// A random order that some global sequence of its ops respects (so it never deadlocks): ops are
// listed one at a time, each picked among those whose producers are listed already.
Table random_table(const Case& c, std::mt19937_64& rng) {
  const std::int32_t chunks = c.shape == Shape::Straight ? 1 : 2;
  Table t = Table::empty(c.p, chunks, c.m, placement_of(c));
  const std::int32_t S = t.stages;
  const auto at = [&](std::int32_t s, std::int32_t j) {
    return static_cast<std::size_t>(s) * static_cast<std::size_t>(c.m) +
           static_cast<std::size_t>(j);
  };
  std::vector<char> f(at(S, 0), 0), b(f), w(f), has_w(f);
  for (char& x : has_w) {
    x = c.split == Split::All ? 1 : c.split == Split::Mixed ? static_cast<char>(rng() % 2) : 0;
  }
  std::vector<std::int32_t> next_f(static_cast<std::size_t>(S), 0), next_b(next_f);
  std::vector<Op> candidates;
  for (;;) {
    candidates.clear();
    for (std::int32_t s = 0; s < S; ++s) {
      for (std::int32_t j = 0; j < c.m; ++j) {
        const bool f_in_order = !c.in_order || j == next_f[static_cast<std::size_t>(s)];
        const bool b_in_order = !c.in_order || j == next_b[static_cast<std::size_t>(s)];
        if (!f[at(s, j)] && f_in_order && (s == 0 || f[at(s - 1, j)]))
          candidates.push_back(Op::forward(s, j));
        if (f[at(s, j)] && !b[at(s, j)] && b_in_order && (s + 1 == S || b[at(s + 1, j)]))
          candidates.push_back(Op::backward(s, j));
        if (b[at(s, j)] && has_w[at(s, j)] && !w[at(s, j)]) candidates.push_back(Op::weight(s, j));
      }
    }
    if (candidates.empty()) break;
    const Op op = candidates[rng() % candidates.size()];
    auto& flag = op.kind == OpKind::Forward ? f : op.kind == OpKind::Backward ? b : w;
    flag[at(op.stage, op.microbatch)] = 1;
    if (op.kind == OpKind::Forward) ++next_f[static_cast<std::size_t>(op.stage)];
    if (op.kind == OpKind::Backward) ++next_b[static_cast<std::size_t>(op.stage)];
    const std::int32_t d = t.placement.device_of(op.stage, op.microbatch);
    t.device_ops[static_cast<std::size_t>(d)].push_back(op);
  }
  return t;
}

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// Per table stage: random durations (picoseconds that do not round) and memory with M_W <= M_B
// (the zero-bubble memory model the timing model shares with the engine's split release), some
// stages with a unit their backwards hold (recompute inside B).
std::vector<StageCost> random_costs(std::int32_t stages, std::mt19937_64& rng) {
  std::vector<StageCost> costs(static_cast<std::size_t>(stages));
  for (StageCost& c : costs) {
    c.forward = Time::from_ps(uniform(rng, 1'000'000, 3'000'000'000));
    c.backward_input = Time::from_ps(uniform(rng, 1'000'000, 3'000'000'000));
    c.backward_weight = Time::from_ps(uniform(rng, 1'000'000, 3'000'000'000));
    c.activation = Bytes(uniform(rng, 1, std::int64_t{1} << 32));
    c.weight_grad = Bytes(uniform(rng, 0, c.activation.count()));
    // A third of the stages recompute per unit inside their backwards, holding a unit meanwhile.
    const std::int64_t unit = uniform(rng, 1, std::int64_t{1} << 31);
    if (rng() % 3 == 0) c.backward_recompute.unit = Bytes(unit);
  }
  return costs;
}

Case random_case(std::mt19937_64& rng) {
  Case c;
  c.p = static_cast<std::int32_t>(uniform(rng, 1, 4));
  c.m = static_cast<std::int32_t>(uniform(rng, 1, 6));
  c.shape = static_cast<Shape>(rng() % 3);
  c.split = static_cast<Split>(rng() % 3);
  c.in_order = rng() % 2 == 0;
  c.delay_ps = rng() % 3 == 0 ? -1 : uniform(rng, 0, 1'000'000'000);
  c.stragglers = rng() % 5 == 0;
  return c;
}

// The table as an order stream (what a streaming generator emits).
class TableStream final : public OrderStream {
 public:
  explicit TableStream(const Table& t)
      : OrderStream(Table::empty(t.devices, t.chunks, t.microbatches, t.placement)), table_(t) {}
  std::uint64_t count(std::int32_t d) const override {
    return table_.device_ops[static_cast<std::size_t>(d)].size();
  }
  std::size_t read(std::int32_t d, std::uint64_t first, std::span<Op> out) const override {
    const auto& ops = table_.device_ops[static_cast<std::size_t>(d)];
    std::size_t n = 0;
    for (std::uint64_t i = first; i < ops.size() && n < out.size(); ++i) out[n++] = ops[i];
    return n;
  }

 private:
  const Table& table_;
};

// The optimizer's view of the case (covered: every backward split, no straggler).
optimizer::Problem problem_of(const Case& c, const std::vector<StageCost>& costs) {
  optimizer::Problem pr;
  pr.set_shape(c.p, c.m,
               c.shape == Shape::Straight ? optimizer::PlacementKind::Straight
               : c.shape == Shape::V      ? optimizer::PlacementKind::V
                                          : optimizer::PlacementKind::Interleaved);
  for (const StageCost& s : costs) {
    pr.forward_ps.push_back(s.forward.ps());
    pr.backward_ps.push_back(s.backward_input.ps());
    pr.weight_ps.push_back(s.backward_weight.ps());
    pr.memory.activation_bytes.push_back(s.activation.count());
    pr.memory.weight_grad_bytes.push_back(s.weight_grad.count());
    pr.memory.unit_bytes.push_back(s.backward_recompute.unit.count());
  }
  pr.memory.limit_bytes.assign(static_cast<std::size_t>(c.p), std::int64_t{1} << 62);
  pr.set_uniform_comm(std::max<std::int64_t>(c.delay_ps, 0));
  pr.objective = optimizer::Objective::Makespan;
  return pr;
}

optimizer::Order order_of(const Table& t) {
  optimizer::Order order(static_cast<std::size_t>(t.devices));
  for (std::size_t d = 0; d < order.size(); ++d) {
    for (const Op& op : t.device_ops[d]) {
      const optimizer::StepKind k = op.kind == OpKind::Forward    ? optimizer::StepKind::F
                                    : op.kind == OpKind::Backward ? optimizer::StepKind::B
                                                                  : optimizer::StepKind::W;
      order[d].push_back(optimizer::Step{k, op.stage, op.microbatch});
    }
  }
  return order;
}

// What the streamed replay reports: everything but the per-op timings.
std::uint64_t metrics_fingerprint(SimulationResult r) {
  r.timings = OpTimings();
  return fingerprint(r);
}

struct Coverage {
  int cases = 0, list = 0, stream = 0, optimizer = 0;
};

void check_case(const Case& c, std::mt19937_64& rng, Coverage& seen) {
  const Table t = random_table(c, rng);
  EngineInput in;
  in.table = &t;
  in.stage_costs = random_costs(t.stages, rng);
  if (c.delay_ps >= 0)
    in.network = FixedDelayNetwork{Time::from_ps(c.delay_ps)};
  else
    in.network = NoCostNetwork{};
  if (c.stragglers) {
    for (std::int32_t d = 0; d < c.p; ++d)
      in.compute_slowdown.push_back(1.0 + static_cast<double>(rng() % 100) / 100.0);
  }

  // Event loop against list replay: everything, op by op.
  EngineInput loop_in = in;
  loop_in.path = ReplayPath::EventLoop;
  const SimulationResult loop = simulate(loop_in);
  REQUIRE(loop.status == RunStatus::Ok);
  const SimulationResult list = simulate(in);
  REQUIRE(list.list_scheduled);
  CHECK(fingerprint(list) == fingerprint(loop));
  CHECK(list.events == loop.events);
  ++seen.list;

  // The streamed replay covers forwards and unsplit backwards in microbatch order.
  if (c.split == Split::None && c.in_order) {
    const SimulationResult streamed = simulate_streamed(in, TableStream(t));
    CHECK(metrics_fingerprint(streamed) == metrics_fingerprint(loop));
    CHECK(streamed.metrics.makespan == loop.metrics.makespan);
    CHECK(streamed.events == loop.events);
    ++seen.stream;
  }

  // The optimizer's timing model covers split backwards on its placements, without stragglers.
  if (c.split == Split::All && !c.stragglers) {
    const optimizer::Problem pr = problem_of(c, in.stage_costs);
    for (std::int32_t s = 0; s < t.stages; ++s)
      REQUIRE(pr.device(s) == t.placement.device_of(s, 0));
    const optimizer::Evaluation e = optimizer::evaluate(pr, order_of(t));
    REQUIRE(e.complete);
    CHECK(e.makespan == loop.metrics.makespan.ps());
    for (std::int32_t d = 0; d < c.p; ++d) {
      const auto du = static_cast<std::size_t>(d);
      CHECK(e.peak_bytes[du] == loop.metrics.memory.peak_activation_per_device[du].count());
      const auto& ops = t.device_ops[du];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const int k = ops[i].kind == OpKind::Forward ? 0 : ops[i].kind == OpKind::Backward ? 1 : 2;
        CHECK(e.end[k][pr.index(ops[i].stage, ops[i].microbatch)] == loop.timings[du][i].end.ps());
      }
    }
    ++seen.optimizer;
  }
  ++seen.cases;
}

}  // namespace

TEST_CASE("every replay path that covers a random case agrees with the event loop exactly") {
  std::mt19937_64 rng(20261128);
  Coverage seen;
  for (int i = 0; i < 3000; ++i) {
    const Case c = random_case(rng);
    CAPTURE(i);
    CAPTURE(c.describe());
    check_case(c, rng, seen);
  }
  // Every pair was exercised many times.
  CHECK(seen.cases == 3000);
  CHECK(seen.list == 3000);
  CHECK(seen.stream >= 300);
  CHECK(seen.optimizer >= 300);
  MESSAGE(fmt::format("cases {}: list {}, stream {}, optimizer {}", seen.cases, seen.list,
                      seen.stream, seen.optimizer));
}
