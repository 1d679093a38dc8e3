#include "sim/engine/list_replay.h"

#include <algorithm>
#include <array>
#include <limits>

#include "sim/engine/list_replay_lanes.h"

namespace bubblesim {

using namespace list_replay;

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
  const std::int32_t devices = table.devices, stages = table.stages;
  const auto m = static_cast<std::size_t>(table.microbatches);
  const bool moves_data = network_.moves_data();
  // Jittered transfers (docs/variability.md) draw per (producer, consumer) node: the event loop
  // labels each transfer, so it replays them.
  if (moves_data && network_.jittered()) return false;
  const std::optional<Time> fixed = network_.fixed_delay();
  const std::int64_t delay = fixed ? fixed->ps() : 0;

  // End time of every (kind, stage, microbatch): kAbsent, kPending, or the end in ps. A fused
  // op's end is recorded under both halves. One pass: an array appears with its first op.
  ReplayScratch local_scratch;
  std::array<std::vector<std::int64_t>, kKinds>& end_of =
      (in_.scratch ? *in_.scratch : local_scratch).end_of_;
  std::array<bool, kKinds> live{};
  auto slot = [m](std::int32_t s, std::int32_t j) {
    return static_cast<std::size_t>(s) * m + static_cast<std::size_t>(j);
  };
  auto mark = [&](OpKind k, std::int32_t s, std::int32_t j) {
    auto& v = end_of[kind_index(k)];
    if (!live[kind_index(k)]) {
      v.assign(static_cast<std::size_t>(stages) * m, kAbsent);  // keeps a reused array's memory
      live[kind_index(k)] = true;
    }
    v[slot(s, j)] = kPending;
  };
  bool any_fused = false;
  for (const auto& ops : table.device_ops) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::Offload || op.kind == OpKind::Reload) return false;  // the loop's
      if (op.kind == OpKind::ForwardBackward) {
        any_fused = true;
        mark(OpKind::Forward, op.stage, op.microbatch);
        mark(OpKind::Backward, op.backward_stage, op.backward_microbatch);
      } else {
        mark(op.kind, op.stage, op.microbatch);
      }
    }
  }
  std::array<std::int64_t*, kKinds> ends{};
  for (std::size_t k = 0; k < kKinds; ++k) ends[k] = live[k] ? end_of[k].data() : nullptr;
  std::int64_t* const end_f = ends[kind_index(OpKind::Forward)];
  std::int64_t* const end_b = ends[kind_index(OpKind::Backward)];
  std::int64_t* const end_w = ends[kind_index(OpKind::Weight)];
  std::int64_t* const end_r = ends[kind_index(OpKind::Recompute)];
  auto present = [&](const std::int64_t* e, std::int32_t s, std::int32_t j) {
    return e != nullptr && e[slot(s, j)] != kAbsent;
  };

  std::vector<StageData> stage(static_cast<std::size_t>(stages));
  for (std::size_t s = 0; s < stage.size(); ++s) {
    const StageCost& c = in_.stage_costs[s];
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
    sd.unsplit_free = std::min(backward_release(c, false, false, in_.release)->bytes, c.activation);
    const std::optional<BackwardRelease> split = backward_release(c, true, false, in_.release);
    sd.split_free = split ? std::min(split->bytes, c.activation) : Bytes::zero();
    sd.split_growth = backward_growth(c, true);
    sd.weight_free = c.activation + sd.split_growth - sd.split_free;
    sd.cost = &c;
  }
  const Placement& placement = table.placement;
  const bool one_replica = placement.replica_of_microbatch.empty();
  const std::int32_t* const device_of_stage = placement.device_of_stage.front().data();
  auto device_of = [&](std::int32_t s, std::int32_t j) {
    return one_replica ? device_of_stage[s] : placement.device_of(s, j);
  };
  const std::vector<double>& slowdown = in_.compute_slowdown;
  // CostDurations' rule, from the per-stage table (with a straggler's slowdown).
  auto duration = [&](const Op& op, std::int32_t d, std::uint32_t node) -> std::int64_t {
    if (durations_ != nullptr) return (*durations_)[node].ps();
    const StageData& c = stage[static_cast<std::size_t>(op.stage)];
    auto backward = [&](std::int32_t s, std::int32_t j) {
      return present(end_w, s, j) ? stage[static_cast<std::size_t>(s)].backward_input
                                  : stage[static_cast<std::size_t>(s)].full_backward;
    };
    std::int64_t t = 0;
    switch (op.kind) {
      case OpKind::Forward:
        t = c.forward;
        break;
      case OpKind::Backward:
        t = backward(op.stage, op.microbatch);
        break;
      case OpKind::Weight:
        t = c.weight;
        break;
      case OpKind::Recompute:
        t = c.recompute;
        break;
      case OpKind::ForwardBackward:
        t = c.fused > 0 ? c.fused
                        : fused_forward_backward(
                              *c.cost, *stage[static_cast<std::size_t>(op.backward_stage)].cost,
                              Time::from_ps(backward(op.backward_stage, op.backward_microbatch)))
                              .ps();
        break;
      default:
        break;
    }
    const auto dd = static_cast<std::size_t>(d);
    if (dd < slowdown.size() && slowdown[dd] != 1.0)
      t = scaled(Time::from_ps(t), slowdown[dd]).ps();
    return t;
  };
  // Memory without copies: what an activation holds once its forward (and recompute) ran, and
  // what its backward frees, are fixed by the table (the rules of device_memory.h).
  auto recomputed = [&](std::int32_t s, std::int32_t j) { return present(end_r, s, j); };
  auto resident = [&](std::int32_t s, std::int32_t j) {
    const bool r = recomputed(s, j);
    const StageCost& c = *stage[static_cast<std::size_t>(s)].cost;
    return forward_allocation(c, r) + (r ? c.activation : Bytes::zero()) +
           backward_growth(c, present(end_w, s, j));
  };
  auto backward_freed = [&](std::int32_t s, std::int32_t j, bool& unit) {
    const std::optional<BackwardRelease> r =
        backward_release(*stage[static_cast<std::size_t>(s)].cost, present(end_w, s, j),
                         recomputed(s, j), in_.release);
    unit = r && r->unit;
    return r ? std::min(r->bytes, resident(s, j)) : Bytes::zero();
  };

  std::span<OpTiming> times = timings.all();
  memory_ = devices_of(table, in_.stage_costs);
  const auto n_devices = static_cast<std::size_t>(devices);
  std::vector<Lane> lanes(n_devices);
  std::size_t node = 0;
  for (std::size_t d = 0; d < n_devices; ++d) {
    lanes[d].ops = table.device_ops[d].data();
    lanes[d].count = static_cast<std::uint32_t>(table.device_ops[d].size());
    lanes[d].row = times.data() + node;
    if (d < device_start_.size()) lanes[d].free = device_start_[d].ps();
    node += table.device_ops[d].size();
  }
  std::vector<std::int32_t> work;
  for (std::int32_t d = devices - 1; d >= 0; --d) work.push_back(d);
  const bool budget = !in_.memory_budget.empty();
  // Ops whose duration and memory the per-stage table answers directly; the rest (recompute,
  // fused ops, stragglers, given durations) go through the general rules above.
  const bool plain = durations_ == nullptr && slowdown.empty() && end_r == nullptr;
  std::uint64_t arrivals = 0, completed = 0;
  // Where an input made on device `from` at `e` arrives on device `to` (cross-stage inputs).
  auto arrival = [&](std::int64_t e, std::int32_t from, std::int32_t to, std::int32_t bytes_stage,
                     std::uint64_t& delayed) {
    if (from == to || !moves_data) return e;
    const std::int64_t at =
        fixed ? e + delay
              : network_
                    .send(from, to, stage[static_cast<std::size_t>(bytes_stage)].p2p, 0,
                          Time::from_ps(e))
                    ->ps();  // contention-free: answered at once
    delayed += at > e ? 1 : 0;
    return at;
  };

  // The tight loop applies when every op is F, B or W with the per-stage durations and memory,
  // one replica, and a constant delay (or no data movement).
  bool fast = plain && one_replica && (fixed || !moves_data) && !budget && !any_fused;
  std::vector<std::int64_t> delay_from_prev(static_cast<std::size_t>(stages), 0);
  std::vector<std::int64_t> delay_from_next(delay_from_prev);
  for (std::int32_t s = 0; s < stages; ++s) {
    const auto ss = static_cast<std::size_t>(s);
    if (moves_data && s > 0 && device_of_stage[s - 1] != device_of_stage[s])
      delay_from_prev[ss] = delay;
    if (moves_data && s + 1 < stages && device_of_stage[s + 1] != device_of_stage[s])
      delay_from_next[ss] = delay;
  }
  const PlainTables plain_tables{stage.data(),
                                 device_of_stage,
                                 delay_from_prev.data(),
                                 delay_from_next.data(),
                                 end_f,
                                 end_b,
                                 end_w,
                                 m,
                                 stages};
  if (fast && run_plain(plain_tables, lanes, memory_, arrivals, completed)) work.clear();
  while (!work.empty()) {
    const std::int32_t d = work.back();
    work.pop_back();
    const auto dd = static_cast<std::size_t>(d);
    Lane& lane = lanes[dd];
    DeviceMemory& mem = memory_[dd];
    std::uint32_t i = lane.cursor;
    std::int64_t free = lane.free;
    for (; i < lane.count; ++i) {
      const Op& op = lane.ops[i];
      const OpKind kind = op.kind;
      const bool forward = kind == OpKind::Forward || kind == OpKind::ForwardBackward;
      const bool backward = kind == OpKind::Backward || kind == OpKind::ForwardBackward;
      const bool fused = kind == OpKind::ForwardBackward;
      const std::int32_t bs = fused ? op.backward_stage : op.stage;
      const std::int32_t bj = fused ? op.backward_microbatch : op.microbatch;
      // Inputs (dependencies.h, written out per kind): the latest producer end (local) and the
      // latest arrival (ready). An input that has not run (kPending) parks the device; an absent
      // one (kAbsent) is skipped.
      std::int64_t ready = 0, local = 0;
      std::uint64_t delayed = 0;
      std::int64_t e = 0;
      if (forward && op.stage > 0 && end_f != nullptr) {
        e = end_f[slot(op.stage - 1, op.microbatch)];
        if (e == kPending) break;
        if (e >= 0) {
          local = e;
          ready = arrival(e, device_of(op.stage - 1, op.microbatch), d, op.stage - 1, delayed);
        }
      }
      if (backward) {
        // A fused op's two halves of one activation do not wait for each other.
        if (end_f != nullptr && !(fused && bs == op.stage && bj == op.microbatch)) {
          e = end_f[slot(bs, bj)];
          if (e == kPending) break;
          local = std::max(local, e);
          ready = std::max(ready, e);
        }
        if (bs + 1 < stages && end_b != nullptr) {
          e = end_b[slot(bs + 1, bj)];
          if (e == kPending) break;
          if (e >= 0) {
            local = std::max(local, e);
            ready = std::max(ready, arrival(e, device_of(bs + 1, bj), d, bs, delayed));
          }
        }
        if (end_r != nullptr) {
          e = end_r[slot(bs, bj)];
          if (e == kPending) break;
          local = std::max(local, e);
          ready = std::max(ready, e);
        }
      } else if (kind == OpKind::Weight || kind == OpKind::Recompute) {
        e = (kind == OpKind::Weight ? end_b : end_f)[slot(op.stage, op.microbatch)];
        if (e == kPending) break;
        local = std::max(local, e);
        ready = std::max(ready, e);
      }
      arrivals += delayed;
      const std::int64_t start = std::max(free, ready);
      const std::int64_t waited_from = std::max(local, free);
      if (start > waited_from) lane.exposed += start - waited_from;
      const StageData& sd = stage[static_cast<std::size_t>(op.stage)];
      const bool split_b = backward && end_w != nullptr && end_w[slot(bs, bj)] != kAbsent;
      std::int64_t length = 0;
      if (plain && kind == OpKind::Forward) {
        length = sd.forward;
      } else if (plain && kind == OpKind::Backward) {
        length = split_b ? sd.backward_input : sd.full_backward;
      } else if (plain && kind == OpKind::Weight) {
        length = sd.weight;
      } else {
        length = duration(op, d, static_cast<std::uint32_t>(lane.row - times.data()) + i);
      }
      const std::int64_t end = (Time::from_ps(start) + Time::from_ps(length)).ps();
      lane.row[i] = OpTiming{Time::from_ps(start), Time::from_ps(end)};
      if (lane.first_start < 0) lane.first_start = start;
      lane.busy += end - start;
      if (kind == OpKind::Recompute) lane.recompute += end - start;
      free = end;
      // Memory: allocations at the start, releases at the end, in this device's order.
      if (forward) {
        mem.allocate(end_r != nullptr && recomputed(op.stage, op.microbatch) ? sd.stage_input
                                                                             : sd.activation,
                     true, Time::from_ps(start));
      } else if (kind == OpKind::Recompute) {
        mem.allocate(sd.activation, false, Time::from_ps(start));
      }
      if (split_b) {
        const Bytes growth = stage[static_cast<std::size_t>(bs)].split_growth;
        if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(start));
      }
      if (budget && mem.total() > in_.memory_budget[dd]) return false;
      if (plain && kind == OpKind::Backward) {
        if (split_b)
          mem.release(sd.split_free, false);
        else
          mem.release(sd.unsplit_free, true);
      } else if (plain && kind == OpKind::Weight) {
        mem.release(sd.weight_free, true);
      } else if (backward || kind == OpKind::Weight) {
        bool unit = false;
        Bytes freed = backward_freed(bs, bj, unit);
        if (kind == OpKind::Weight) {
          freed = resident(bs, bj) - freed;
          unit = true;
        }
        mem.release(freed, unit);
      }
      // Record the end and wake the devices whose next input this op may be.
      auto wake = [&](std::int32_t s, std::int32_t j) {
        if (s < 0 || s >= stages) return;
        const auto c = static_cast<std::size_t>(device_of(s, j));
        if (lanes[c].parked) {
          lanes[c].parked = false;
          work.push_back(static_cast<std::int32_t>(c));
        }
      };
      if (forward) {
        end_f[slot(op.stage, op.microbatch)] = end;
        wake(op.stage + 1, op.microbatch);
      }
      if (backward) {
        end_b[slot(bs, bj)] = end;
        wake(bs - 1, bj);
      } else if (!forward) {
        ends[kind_index(kind)][slot(op.stage, op.microbatch)] = end;
      }
    }
    lane.parked = i < lane.count;  // waiting for an input
    completed += i - lane.cursor;
    lane.cursor = i;
    lane.free = free;
  }
  exposed_comm_.resize(n_devices);
  device_times_.assign(n_devices, DeviceTimes{});
  for (std::size_t d = 0; d < n_devices; ++d) {
    const Lane& lane = lanes[d];
    exposed_comm_[d] = Time::from_ps(lane.exposed);
    DeviceTimes& t = device_times_[d];
    t.busy = Time::from_ps(lane.busy);
    t.recompute = Time::from_ps(lane.recompute);
    if (lane.first_start >= 0) t.first = Time::from_ps(lane.first_start);
    if (lane.cursor > 0) t.last = t.end = Time::from_ps(lane.free);
  }
  events_ = completed + arrivals;
  return completed == table.op_count();
}

}  // namespace bubblesim
