#include "sim/engine/list_replay.h"

#include <algorithm>
#include <array>
#include <limits>

#include "schedules/replay_rules.h"
#include "sim/engine/list_replay_lanes.h"

namespace bubblesim {

using namespace list_replay;
using namespace list_scheduling;

namespace {

// Which (kind, stage, microbatch) the table has: one end-time array per op kind, by (stage,
// microbatch), kAbsent where the op does not exist and kPending where it has not run yet. A
// fused op's end is recorded under both halves. An array exists once the table has an op of its
// kind (a reused array keeps its memory).
class EndTimes {
 public:
  EndTimes(std::array<std::vector<std::int64_t>, kKinds>& arrays, std::int32_t stages,
           std::size_t m)
      : arrays_(arrays), stages_(stages), m_(m) {}

  /// Marks every op of `table` pending. False when the table has copies (the event loop's).
  bool mark(const Table& table) {
    for (const auto& ops : table.device_ops) {
      for (const Op& op : ops) {
        if (op.kind == OpKind::Offload || op.kind == OpKind::Reload) return false;
        if (op.kind == OpKind::ForwardBackward) {
          any_fused = true;
          mark(OpKind::Forward, op.stage, op.microbatch);
          mark(OpKind::Backward, op.backward_stage, op.backward_microbatch);
        } else {
          mark(op.kind, op.stage, op.microbatch);
        }
      }
    }
    for (std::size_t k = 0; k < kKinds; ++k) ends[k] = live_[k] ? arrays_[k].data() : nullptr;
    return true;
  }
  std::size_t slot(std::int32_t s, std::int32_t j) const {
    return static_cast<std::size_t>(s) * m_ + static_cast<std::size_t>(j);
  }
  std::int64_t* of(OpKind k) const { return ends[kind_index(k)]; }
  bool present(OpKind k, std::int32_t s, std::int32_t j) const {
    const std::int64_t* e = of(k);
    return e != nullptr && e[slot(s, j)] != kAbsent;
  }
  // The kernel's end-time store (list_scheduling.h).
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    const std::int64_t* e = of(k);
    return e != nullptr ? e[slot(s, j)] : kAbsent;
  }
  void set(OpKind k, std::int32_t s, std::int32_t j, std::int64_t e) { of(k)[slot(s, j)] = e; }

  std::array<std::int64_t*, kKinds> ends{};
  bool any_fused = false;

 private:
  void mark(OpKind k, std::int32_t s, std::int32_t j) {
    auto& v = arrays_[kind_index(k)];
    if (!live_[kind_index(k)]) {
      v.assign(static_cast<std::size_t>(stages_) * m_, kAbsent);
      live_[kind_index(k)] = true;
    }
    v[slot(s, j)] = kPending;
  }
  std::array<std::vector<std::int64_t>, kKinds>& arrays_;
  std::array<bool, kKinds> live_{};
  std::int32_t stages_;
  std::size_t m_;
};

// Per table stage, what the loops read for every op (durations in ps, bytes; device_memory.h's
// release rules clamped once here).
std::vector<StageData> stage_data(const std::vector<StageCost>& costs, ReleaseConvention release) {
  std::vector<StageData> stage(costs.size());
  for (std::size_t s = 0; s < stage.size(); ++s) {
    const StageCost& c = costs[s];
    StageData& sd = stage[s];
    sd.forward = c.forward.ps();
    sd.backward_input = c.backward_input.ps();
    sd.full_backward = c.full_backward().ps();
    sd.weight = c.backward_weight.ps();
    sd.recompute = (c.recompute > Time::zero() ? c.recompute : c.forward).ps();
    sd.fused = c.fused.ps();
    sd.activation = c.activation;
    sd.stage_input = c.stage_input;
    sd.p2p = c.p2p;
    sd.unsplit_free = std::min(backward_release(c, false, false, release)->bytes,
                               held_during_backward(c, false, false));
    const std::optional<BackwardRelease> split = backward_release(c, true, false, release);
    const Bytes split_held = held_during_backward(c, true, false);
    sd.split_free = split ? std::min(split->bytes, split_held) : Bytes::zero();
    sd.split_growth = backward_growth(c, true);
    sd.unsplit_growth = backward_growth(c, false);
    sd.weight_free = split_held - sd.split_free;
    sd.cost = &c;
  }
  return stage;
}

// The general loop: every op kind, replicas, given durations, stragglers, a memory budget and
// any contention-free network, as the list-scheduling kernel's policy (list_scheduling.h). One
// object per ListReplay::run; each device's run (run_lane) sets the device it places ops on.
class GeneralLoop {
 public:
  GeneralLoop(const Table& table, const EngineInput& in, const std::vector<Time>* durations,
              NetworkModel& network, EndTimes& ends, const std::vector<StageData>& stage,
              std::vector<Lane>& lanes, std::vector<DeviceMemory>& memory, OpTiming* first_timing)
      : table_(table),
        in_(in),
        durations_(durations),
        network_(network),
        ends_(ends),
        stage_(stage),
        lanes_(lanes),
        memory_(memory),
        first_timing_(first_timing),
        moves_data_(network.moves_data()),
        fixed_(network.fixed_delay()),
        plain_(durations == nullptr && in.compute_slowdown.empty() &&
               ends.of(OpKind::Recompute) == nullptr) {}

  /// Runs the devices on `work` (and those they wake) as far as their inputs allow. False when
  /// memory went over a budget.
  bool run(std::vector<std::int32_t>& work) {
    visit_.work = &work;
    while (!work.empty()) {
      const std::int32_t d = work.back();
      work.pop_back();
      if (!run_lane(d)) return false;
    }
    return true;
  }
  std::uint64_t completed = 0;

  // The kernel's policy, for the device being run (visit_).

  /// Where an input made at `e` arrives on this device (an activation or a gradient).
  std::int64_t arrival(DependencyKind kind, std::int32_t s, std::int32_t j, std::int64_t e) {
    const std::int32_t from = device_of(s, j);
    if (from == visit_.device || !moves_data_) return e;
    return fixed_ ? replay_rules::arrival(e, fixed_->ps())
                  : network_
                        .send(from, visit_.device, stage(transfer_stage(kind, s)).p2p, 0,
                              Time::from_ps(e))
                        ->ps();  // contention-free: answered at once
  }
  /// The op's duration: CostDurations' rule from the per-stage table (with a straggler's
  /// slowdown), or the given durations.
  std::int64_t length(const Op& op) const {
    const StageData& c = stage(op.stage);
    if (plain_) {
      if (op.kind == OpKind::Forward) return c.forward;
      if (op.kind == OpKind::Backward) return backward_length(op.stage, op.microbatch);
      if (op.kind == OpKind::Weight) return c.weight;
    }
    const Lane& lane = *visit_.lane;
    if (durations_ != nullptr) {
      // The node of the op: the lane's row, its cursor and the ops run since (ahead() gives the
      // whole rest of the row in one stretch).
      const std::size_t node =
          static_cast<std::size_t>(lane.row - first_timing_) + lane.cursor + visit_.ran;
      return (*durations_)[node].ps();
    }
    std::int64_t t = 0;
    switch (op.kind) {
      case OpKind::Forward:
        t = c.forward;
        break;
      case OpKind::Backward:
        t = backward_length(op.stage, op.microbatch);
        break;
      case OpKind::Weight:
        t = c.weight;
        break;
      case OpKind::Recompute:
        t = c.recompute;
        break;
      case OpKind::ForwardBackward:
        t = c.fused > 0
                ? c.fused
                : fused_forward_backward(
                      *c.cost, *stage(op.backward_stage).cost,
                      Time::from_ps(backward_length(op.backward_stage, op.backward_microbatch)))
                      .ps();
        break;
      default:
        break;
    }
    const std::vector<double>& slowdown = in_.compute_slowdown;
    const auto dd = static_cast<std::size_t>(visit_.device);
    if (dd < slowdown.size() && slowdown[dd] != 1.0)
      t = scaled(Time::from_ps(t), slowdown[dd]).ps();
    return t;
  }
  /// Memory of one op: allocations at its start, releases at its end, in the device's order.
  /// False when an allocation goes over the device's budget.
  bool start(const Op& op, const Slot& slot) { return account_memory(op, slot.start); }
  /// Recompute time, and the devices whose next input the op's end may be.
  void ended(const Op& op, const Slot& slot) {
    ++visit_.ran;
    if (op.kind == OpKind::Recompute) visit_.lane->recompute += slot.end - slot.start;
    for_each_half(op, [&](OpKind k, std::int32_t s, std::int32_t j) {
      for_each_consumer(k, s, j, table_.stages,
                        [&](OpKind, std::int32_t cs, std::int32_t cj, DependencyKind d) {
                          if (d != DependencyKind::Local) wake(device_of(cs, cj));
                        });
    });
  }

 private:
  std::int32_t device_of(std::int32_t s, std::int32_t j) const {
    const Placement& placement = table_.placement;
    return placement.replica_of_microbatch.empty()
               ? placement.device_of_stage.front()[static_cast<std::size_t>(s)]
               : placement.device_of(s, j);
  }
  const StageData& stage(std::int32_t s) const { return stage_[static_cast<std::size_t>(s)]; }
  bool recomputed(std::int32_t s, std::int32_t j) const {
    return ends_.present(OpKind::Recompute, s, j);
  }
  void wake(std::int32_t d) {
    Lane& lane = lanes_[static_cast<std::size_t>(d)];
    if (lane.parked) {
      lane.parked = false;
      visit_.work->push_back(d);
    }
  }

  /// A backward's duration (CostDurations' rule): its input half when a W follows.
  std::int64_t backward_length(std::int32_t s, std::int32_t j) const {
    const StageData& c = stage(s);
    return replay_rules::backward_duration(c.backward_input, c.weight,
                                           ends_.present(OpKind::Weight, s, j));
  }

  /// What an activation holds once its forward (and recompute) ran (device_memory.h's rules).
  Bytes resident(std::int32_t s, std::int32_t j) const {
    const bool r = recomputed(s, j);
    const StageCost& c = *stage(s).cost;
    return forward_allocation(c, r) + (r ? c.activation : Bytes::zero()) +
           backward_growth(c, ends_.present(OpKind::Weight, s, j));
  }
  /// What its backward frees, and whether that ends the activation's count.
  Bytes backward_freed(std::int32_t s, std::int32_t j, bool& unit) const {
    const std::optional<BackwardRelease> r = backward_release(
        *stage(s).cost, ends_.present(OpKind::Weight, s, j), recomputed(s, j), in_.release);
    unit = r && r->unit;
    return r ? std::min(r->bytes, resident(s, j)) : Bytes::zero();
  }

  bool account_memory(const Op& op, std::int64_t start) {
    const auto dd = static_cast<std::size_t>(visit_.device);
    DeviceMemory& mem = memory_[dd];
    const bool fused = op.kind == OpKind::ForwardBackward;
    const bool forward = op.kind == OpKind::Forward || fused;
    const bool backward = op.kind == OpKind::Backward || fused;
    const std::int32_t bs = fused ? op.backward_stage : op.stage;
    const std::int32_t bj = fused ? op.backward_microbatch : op.microbatch;
    const StageData& sd = stage(op.stage);
    const bool split_b = backward && ends_.present(OpKind::Weight, bs, bj);
    if (forward) {
      mem.allocate(ends_.of(OpKind::Recompute) != nullptr && recomputed(op.stage, op.microbatch)
                       ? sd.stage_input
                       : sd.activation,
                   true, Time::from_ps(start));
    } else if (op.kind == OpKind::Recompute) {
      mem.allocate(sd.activation, false, Time::from_ps(start));
    }
    if (backward) {
      const Bytes growth = split_b ? stage(bs).split_growth : stage(bs).unsplit_growth;
      if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(start));
    }
    if (!in_.memory_budget.empty() && mem.total() > in_.memory_budget[dd]) return false;
    if (plain_ && op.kind == OpKind::Backward) {
      if (split_b)
        mem.release(sd.split_free, false);
      else
        mem.release(sd.unsplit_free, true);
    } else if (plain_ && op.kind == OpKind::Weight) {
      mem.release(sd.weight_free, true);
    } else if (backward || op.kind == OpKind::Weight) {
      bool unit = false;
      Bytes freed = backward_freed(bs, bj, unit);
      if (op.kind == OpKind::Weight) {
        freed = resident(bs, bj) - freed;
        unit = true;
      }
      mem.release(freed, unit);
    }
    return true;
  }

  /// Runs device d's ops from its cursor until one waits for an input (it parks) or its order
  /// ends. False when memory went over a budget.
  bool run_lane(std::int32_t d) {
    Lane& lane = lanes_[static_cast<std::size_t>(d)];
    visit_.device = d;
    visit_.lane = &lane;
    visit_.ran = 0;
    const std::uint32_t before = lane.cursor;
    const LaneStop stop = list_scheduling::run_lane(lane, ends_, *this, table_.stages);
    if (stop == LaneStop::Refused) return false;
    lane.parked = stop == LaneStop::Waiting;
    completed += lane.cursor - before;
    return true;
  }

  const Table& table_;
  const EngineInput& in_;
  const std::vector<Time>* durations_;
  NetworkModel& network_;
  EndTimes& ends_;
  const std::vector<StageData>& stage_;
  std::vector<Lane>& lanes_;
  std::vector<DeviceMemory>& memory_;
  const OpTiming* first_timing_;  // node numbering: an op's timing's offset from the first
  const bool moves_data_;
  const std::optional<Time> fixed_;
  // Ops whose duration and memory the per-stage table answers directly; the rest (recompute,
  // fused ops, stragglers, given durations) go through the general rules.
  const bool plain_;
  // The device being run (run_lane): its lane, the ops it ran since its cursor, and the devices
  // its ops' ends may wake.
  struct Visit {
    std::int32_t device = 0;
    Lane* lane = nullptr;
    std::uint32_t ran = 0;
    std::vector<std::int32_t>* work = nullptr;
  };
  Visit visit_;
};

// Per stage s, the constant delay between stages s and s + 1 (0 where both are on one device or
// nothing moves): an activation into F(s + 1) and a gradient into B(s).
std::vector<std::int64_t> boundary_delays(const Table& table, bool moves_data, std::int64_t delay) {
  const std::vector<std::int32_t>& device_of = table.placement.device_of_stage.front();
  std::vector<std::int64_t> out(static_cast<std::size_t>(table.stages), 0);
  for (std::size_t s = 0; s + 1 < out.size(); ++s)
    if (moves_data && device_of[s + 1] != device_of[s]) out[s] = delay;
  return out;
}

}  // namespace

ListReplay::ListReplay(const Table& table, const EngineInput& in,
                       const std::vector<Time>* durations, NetworkModel& network,
                       std::vector<Time> device_start)
    : table_(table),
      in_(in),
      durations_(durations),
      network_(network),
      device_start_(std::move(device_start)) {}

bool ListReplay::run(OpTimings& timings) {
  const Table& table = table_;
  const bool moves_data = network_.moves_data();
  // Jittered transfers (docs/variability.md) draw per (producer, consumer) node: the event loop
  // labels each transfer, so it replays them.
  if (moves_data && network_.jittered()) return false;
  ReplayScratch local_scratch;
  EndTimes ends((in_.scratch ? *in_.scratch : local_scratch).end_of_, table.stages,
                static_cast<std::size_t>(table.microbatches));
  if (!ends.mark(table)) return false;  // copies: the event loop's
  const std::vector<StageData> stage = stage_data(in_.stage_costs, in_.release);

  std::span<OpTiming> times = timings.all();
  memory_ = devices_of(table, in_.stage_costs);
  const auto n_devices = static_cast<std::size_t>(table.devices);
  std::vector<Lane> lanes(n_devices);
  std::size_t node = 0;
  for (std::size_t d = 0; d < n_devices; ++d) {
    lanes[d].ops = table.device_ops[d].data();
    lanes[d].count = static_cast<std::uint32_t>(table.device_ops[d].size());
    lanes[d].row = times.data() + node;
    if (d < device_start_.size()) lanes[d].clock.free = device_start_[d].ps();
    node += table.device_ops[d].size();
  }
  std::vector<std::int32_t> work;
  for (std::int32_t d = table.devices - 1; d >= 0; --d) work.push_back(d);
  GeneralLoop general(table, in_, durations_, network_, ends, stage, lanes, memory_, times.data());

  // The tight loop applies when every op is F, B or W with the per-stage durations and memory,
  // one replica, no budget and a constant delay (or no data movement); else the general loop.
  const std::optional<Time> fixed = network_.fixed_delay();
  const bool fast = durations_ == nullptr && in_.compute_slowdown.empty() &&
                    ends.of(OpKind::Recompute) == nullptr &&
                    table.placement.replica_of_microbatch.empty() && (fixed || !moves_data) &&
                    in_.memory_budget.empty() && !ends.any_fused;
  if (fast) {
    const std::vector<std::int64_t> delay =
        boundary_delays(table, moves_data, fixed ? fixed->ps() : 0);
    const PlainTables plain_tables{stage.data(),
                                   delay.data(),
                                   ends.of(OpKind::Forward),
                                   ends.of(OpKind::Backward),
                                   ends.of(OpKind::Weight),
                                   static_cast<std::size_t>(table.microbatches),
                                   table.stages};
    general.completed += run_plain(plain_tables, lanes, memory_);
  } else if (!general.run(work)) {
    return false;  // over a budget: the event loop orders the report
  }

  exposed_comm_.resize(n_devices);
  device_times_.assign(n_devices, DeviceTimes{});
  std::uint64_t arrivals = 0;
  for (std::size_t d = 0; d < n_devices; ++d) {
    const Lane& lane = lanes[d];
    exposed_comm_[d] = Time::from_ps(lane.clock.exposed);
    DeviceTimes& t = device_times_[d];
    t.busy = Time::from_ps(lane.clock.busy);
    t.recompute = Time::from_ps(lane.recompute);
    if (lane.clock.first_start >= 0) t.first = Time::from_ps(lane.clock.first_start);
    if (lane.cursor > 0) t.last = t.end = Time::from_ps(lane.clock.free);
    arrivals += lane.clock.arrivals;
  }
  events_ = general.completed + arrivals;
  return general.completed == table.op_count();
}

std::shared_ptr<ReplayScratch> make_replay_scratch() { return std::make_shared<ReplayScratch>(); }

}  // namespace bubblesim
