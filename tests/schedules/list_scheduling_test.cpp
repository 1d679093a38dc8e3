// The list-scheduling kernel (schedules/list_scheduling.h) on its own: the producer walk and its
// inverse, the start rule against an end-time store, and the lane loop on a table small enough
// to schedule by hand. The replays built on it are checked against the event loop in
// tests/engine/replay_differential_test.cpp.
#include "schedules/list_scheduling.h"

#include <doctest/doctest.h>

#include <array>
#include <map>
#include <set>
#include <tuple>
#include <vector>

using namespace bubblesim;
using namespace bubblesim::list_scheduling;

namespace {

using Half = std::tuple<OpKind, std::int32_t, std::int32_t>;
constexpr std::array<OpKind, 6> kHalves = {OpKind::Forward,   OpKind::Backward, OpKind::Weight,
                                           OpKind::Recompute, OpKind::Offload,  OpKind::Reload};

std::set<Half> producers(const Op& op, std::int32_t stages) {
  std::set<Half> out;
  for_each_producer(op, stages, [&](OpKind k, std::int32_t s, std::int32_t j, DependencyKind) {
    out.insert({k, s, j});
  });
  return out;
}

// A store over a map: absent unless listed, pending when listed as -1.
struct MapEnds {
  std::map<Half, std::int64_t> at;
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    const auto it = at.find({k, s, j});
    return it == at.end() ? kAbsent : it->second;
  }
  void set(OpKind k, std::int32_t s, std::int32_t j, std::int64_t e) { at[{k, s, j}] = e; }
};

// One device's order (a table row) as the kernel's lane source.
struct RowLane {
  std::vector<Op> ops;
  std::size_t cursor = 0;
  std::vector<Slot> slots{};
  LaneClock clock{};
  std::span<const Op> ahead() const { return {ops.data() + cursor, ops.data() + ops.size()}; }
  void ran(std::size_t /*i*/, const Slot& slot) { slots.push_back(slot); }
  void advance(std::size_t n) { cursor += n; }
};

// F = 1, B = 2 (time units), a delay of 10 on every activation and gradient.
struct UnitPolicy {
  std::int64_t arrival(DependencyKind, std::int32_t, std::int32_t, std::int64_t e) const {
    return e + 10;
  }
  std::int64_t length(const Op& op) const { return op.kind == OpKind::Forward ? 1 : 2; }
  bool start(const Op&, const Slot&) { return true; }
  void ended(const Op&, const Slot&) {}
};

}  // namespace

TEST_CASE("list scheduling: the producer walk is docs/schedule-rules.md §2") {
  CHECK(producers(Op::forward(0, 3), 4).empty());
  CHECK(producers(Op::forward(2, 3), 4) == std::set<Half>{{OpKind::Forward, 1, 3}});
  CHECK(producers(Op::backward(1, 0), 4) == std::set<Half>{{OpKind::Forward, 1, 0},
                                                           {OpKind::Backward, 2, 0},
                                                           {OpKind::Recompute, 1, 0},
                                                           {OpKind::Reload, 1, 0}});
  CHECK(producers(Op::backward(3, 0), 4) ==
        std::set<Half>{{OpKind::Forward, 3, 0}, {OpKind::Recompute, 3, 0}, {OpKind::Reload, 3, 0}});
  CHECK(producers(Op::weight(1, 2), 4) == std::set<Half>{{OpKind::Backward, 1, 2}});
  CHECK(producers(Op{OpKind::Reload, 1, 2}, 4) == std::set<Half>{{OpKind::Offload, 1, 2}});
  // A fused F&B waits for both halves' producers, but not for itself: F2.1 & B2.1 does not wait
  // for F2.1.
  CHECK(producers(Op::fused(2, 1, 2, 1), 4) == std::set<Half>{{OpKind::Forward, 1, 1},
                                                              {OpKind::Backward, 3, 1},
                                                              {OpKind::Recompute, 2, 1},
                                                              {OpKind::Reload, 2, 1}});
  CHECK(producers(Op::fused(2, 5, 1, 1), 4).count({OpKind::Forward, 1, 1}) == 1);
}

TEST_CASE("list scheduling: the consumer walk is the producer walk inverted") {
  constexpr std::int32_t kStages = 3;
  std::map<Half, std::set<Half>> consumers_by_producers;  // from for_each_producer
  for (OpKind k : kHalves) {
    for (std::int32_t s = 0; s < kStages; ++s) {
      for_each_producer(k, s, 0, kStages,
                        [&](OpKind pk, std::int32_t ps, std::int32_t pj, DependencyKind) {
                          consumers_by_producers[{pk, ps, pj}].insert({k, s, 0});
                        });
    }
  }
  for (OpKind k : kHalves) {
    for (std::int32_t s = 0; s < kStages; ++s) {
      CAPTURE(static_cast<int>(k));
      CAPTURE(s);
      std::set<Half> consumers;
      for_each_consumer(k, s, 0, kStages,
                        [&](OpKind ck, std::int32_t cs, std::int32_t cj, DependencyKind) {
                          consumers.insert({ck, cs, cj});
                        });
      CHECK(consumers == consumers_by_producers[{k, s, 0}]);
    }
  }
}

TEST_CASE("list scheduling: inputs against an end-time store") {
  MapEnds ends;
  ends.set(OpKind::Forward, 1, 0, 5);
  ends.set(OpKind::Backward, 2, 0, 7);
  const auto plus3 = [](DependencyKind d, std::int32_t, std::int32_t, std::int64_t e) {
    return d == DependencyKind::Local ? e : e + 3;
  };
  // B1.0: its F ended at 5 (local), the gradient of B2.0 ended at 7 and arrives at 10; R1.0 and
  // L1.0 are absent and skipped.
  Inputs in = inputs_of(Op::backward(1, 0), 3, ends, plus3);
  CHECK_FALSE(in.pending);
  CHECK(in.local == 7);
  CHECK(in.ready == 10);
  CHECK(in.delayed == 1);
  // start = max(stream free 8, ready 10) = 10; exposed = 10 - max(local 7, free 8) = 2.
  const Slot slot = place(8, in, 4);
  CHECK(slot.start == 10);
  CHECK(slot.end == 14);
  CHECK(slot.exposed == 2);
  // A pending producer makes the op wait.
  ends.set(OpKind::Recompute, 1, 0, kPending);
  CHECK(inputs_of(Op::backward(1, 0), 3, ends, plus3).pending);
}

TEST_CASE("list scheduling: two devices of 1F1B scheduled by the lane loop, by hand") {
  // Device 0 runs F0.0 F0.1 B0.0 B0.1, device 1 runs F1.0 B1.0 F1.1 B1.1; F = 1, B = 2, a delay
  // of 10 on each activation and gradient.
  RowLane d0{{Op::forward(0, 0), Op::forward(0, 1), Op::backward(0, 0), Op::backward(0, 1)}};
  RowLane d1{{Op::forward(1, 0), Op::backward(1, 0), Op::forward(1, 1), Op::backward(1, 1)}};
  MapEnds ends;
  for (std::int32_t s = 0; s < 2; ++s)
    for (std::int32_t j = 0; j < 2; ++j)
      for (OpKind k : {OpKind::Forward, OpKind::Backward}) ends.set(k, s, j, kPending);
  UnitPolicy policy;
  std::array<RowLane*, 2> lanes{&d0, &d1};
  const std::uint64_t ran = sweep(2, [&](std::size_t d) -> std::uint64_t {
    const std::size_t before = lanes[d]->cursor;
    run_lane(*lanes[d], ends, policy, 2);
    return lanes[d]->cursor - before;
  });
  CHECK(ran == 8);
  // Device 0: F0.0 [0, 1], F0.1 [1, 2]; B0.0 waits for B1.0's gradient.
  // Device 1: F1.0 starts when F0.0's activation arrives, 1 + 10 = 11: [11, 12]; B1.0 [12, 14];
  // F1.1: F0.1 arrived at 12, the stream is free at 14: [14, 15]; B1.1 [15, 17].
  // Device 0: B0.0 at B1.0's arrival 14 + 10 = 24: [24, 26]; B0.1 at 17 + 10 = 27: [27, 29].
  const std::vector<std::pair<std::int64_t, std::int64_t>> want0{
      {0, 1}, {1, 2}, {24, 26}, {27, 29}};
  const std::vector<std::pair<std::int64_t, std::int64_t>> want1{
      {11, 12}, {12, 14}, {14, 15}, {15, 17}};
  REQUIRE(d0.slots.size() == 4);
  REQUIRE(d1.slots.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(std::pair(d0.slots[i].start, d0.slots[i].end) == want0[i]);
    CHECK(std::pair(d1.slots[i].start, d1.slots[i].end) == want1[i]);
  }
  // The clocks: busy 1 + 1 + 2 + 2 = 6 on each; device 1 first started at 11. Exposed
  // communication is the wait after the stream was free and the producer had ended: device 0
  // 24 - max(B1.0's end 14, free 2) = 10 and 27 - max(17, 26) = 1; device 1 11 - max(F0.0's end
  // 1, free 0) = 10 (F1.1's input had arrived when its stream became free).
  CHECK(d0.clock.busy == 6);
  CHECK(d1.clock.busy == 6);
  CHECK(d0.clock.first_start == 0);
  CHECK(d1.clock.first_start == 11);
  CHECK(d0.clock.exposed == 11);
  CHECK(d1.clock.exposed == 10);
  CHECK(d0.clock.free == 29);
  CHECK(d0.clock.arrivals == 2);  // two gradients
  CHECK(d1.clock.arrivals == 2);  // two activations
}

TEST_CASE("list scheduling: a lane stops at an op that waits and at one its policy refuses") {
  struct Refusing : UnitPolicy {
    bool start(const Op& op, const Slot&) { return op.kind != OpKind::Backward; }
  };
  RowLane lane{{Op::forward(0, 0), Op::backward(0, 0)}};
  MapEnds ends;
  ends.set(OpKind::Forward, 0, 0, kPending);
  ends.set(OpKind::Backward, 0, 0, kPending);
  Refusing refusing;
  CHECK(run_lane(lane, ends, refusing, 1) == LaneStop::Refused);
  CHECK(lane.cursor == 1);
  RowLane waiting{{Op::forward(1, 0)}};
  ends.set(OpKind::Forward, 1, 0, kPending);
  ends.set(OpKind::Forward, 0, 1, kPending);
  RowLane blocked{{Op::forward(1, 1)}};
  UnitPolicy policy;
  CHECK(run_lane(blocked, ends, policy, 2) == LaneStop::Waiting);
  CHECK(blocked.cursor == 0);
  CHECK(run_lane(waiting, ends, policy, 2) == LaneStop::End);  // F0.0 ended at 1
  CHECK(waiting.slots.front().start == 11);
}
