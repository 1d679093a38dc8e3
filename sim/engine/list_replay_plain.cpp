#include <cassert>

#include "schedules/list_scheduling.h"
#include "schedules/replay_rules.h"
#include "sim/engine/list_replay_lanes.h"

namespace bubblesim::list_replay {
namespace {

using namespace list_scheduling;

// The end times of a plain table: F, B and W by (stage, microbatch); W absent when the table
// splits no backward.
struct PlainEnds {
  std::int64_t *f, *b, *w;
  std::size_t m;

  std::size_t slot(std::int32_t s, std::int32_t j) const {
    return static_cast<std::size_t>(s) * m + static_cast<std::size_t>(j);
  }
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    switch (k) {
      case OpKind::Forward:
        return f[slot(s, j)];
      case OpKind::Backward:
        return b[slot(s, j)];
      case OpKind::Weight:
        return w != nullptr ? w[slot(s, j)] : kAbsent;
      default:
        return kAbsent;
    }
  }
  void set(OpKind k, std::int32_t s, std::int32_t j, std::int64_t e) {
    assert(k == OpKind::Forward || k == OpKind::Backward || k == OpKind::Weight);
    (k == OpKind::Forward ? f : k == OpKind::Backward ? b : w)[slot(s, j)] = e;
  }
  bool split(std::int32_t s, std::int32_t j) const {
    return w != nullptr && w[slot(s, j)] != kAbsent;
  }
};

// Durations and memory from the per-stage table, a constant delay per stage boundary.
struct PlainPolicy {
  static constexpr std::uint32_t kKinds =
      kind_bit(OpKind::Forward) | kind_bit(OpKind::Backward) | kind_bit(OpKind::Weight);
  const PlainTables& t;
  const PlainEnds& ends;
  DeviceMemory& mem;

  std::int64_t arrival(DependencyKind d, std::int32_t s, std::int32_t /*j*/, std::int64_t e) const {
    return replay_rules::arrival(e, t.boundary_delay[transfer_stage(d, s)]);
  }
  std::int64_t length(const Op& op) const {
    const StageData& sd = t.stage[op.stage];
    if (op.kind == OpKind::Forward) return sd.forward;
    if (op.kind == OpKind::Backward)
      return replay_rules::backward_duration(sd.backward_input, sd.weight,
                                             ends.split(op.stage, op.microbatch));
    return sd.weight;
  }
  bool start(const Op& op, const Slot& slot) {
    const StageData& sd = t.stage[op.stage];
    if (op.kind == OpKind::Forward) {
      mem.allocate(sd.activation, true, Time::from_ps(slot.start));
    } else if (op.kind == OpKind::Backward) {
      const bool split = ends.split(op.stage, op.microbatch);
      const Bytes growth = split ? sd.split_growth : sd.unsplit_growth;  // recompute inside B
      if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(slot.start));
      mem.release(split ? sd.split_free : sd.unsplit_free, !split);
    } else {
      mem.release(sd.weight_free, true);
    }
    return true;
  }
  void ended(const Op& /*op*/, const Slot& /*slot*/) const {}
};

}  // namespace

std::uint64_t run_plain(const PlainTables& t, std::vector<Lane>& lanes,
                        std::vector<DeviceMemory>& memory) {
  PlainEnds ends{t.end_f, t.end_b, t.end_w, t.m};
  return sweep(lanes.size(), [&](std::size_t d) -> std::uint64_t {
    Lane& lane = lanes[d];
    PlainPolicy policy{t, ends, memory[d]};
    const std::uint32_t before = lane.cursor;
    run_lane(lane, ends, policy, t.stages);
    return lane.cursor - before;
  });
}

}  // namespace bubblesim::list_replay
