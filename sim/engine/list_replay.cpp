#include "sim/engine/list_replay.h"

#include <algorithm>
#include <array>

#include "sim/engine/dependencies.h"

namespace bubblesim {
namespace {

// A cross-device input of the op being placed: sent when its producer ended.
struct Transfer {
  std::int32_t from;
  Time sent;
  Bytes bytes;
  std::uint32_t producer;  // node
};

}  // namespace

ListReplay::ListReplay(const OpIndex& index, const EngineInput& in,
                       const std::vector<Time>* durations, NetworkModel& network,
                       std::vector<Time> device_start)
    : index_(index),
      in_(in),
      durations_(durations),
      cost_durations_(in.compute_slowdown),
      network_(network),
      device_start_(std::move(device_start)) {}

bool ListReplay::run(OpTimings& timings) {
  const Table& table = index_.table();
  const std::vector<StageCost>& costs = in_.stage_costs;
  const std::int32_t devices = table.devices;
  const std::int32_t stages = table.stages;
  const bool moves_data = network_.moves_data();
  const std::optional<Time> delay = network_.fixed_delay();
  const bool recompute = index_.any(OpKind::Recompute);
  std::span<OpTiming> times = timings.all();
  memory_ = devices_of(table, costs);
  exposed_comm_.assign(static_cast<std::size_t>(devices), Time::zero());
  std::vector<std::uint32_t> head(static_cast<std::size_t>(devices));
  std::vector<Time> free_at(static_cast<std::size_t>(devices), Time::zero());
  if (device_start_.size() == free_at.size()) free_at = device_start_;
  std::vector<char> parked(static_cast<std::size_t>(devices), 0);
  std::vector<std::int32_t> work;
  for (std::int32_t d = devices - 1; d >= 0; --d) {
    head[static_cast<std::size_t>(d)] = index_.device_begin(d);
    work.push_back(d);
  }
  auto cost = [&](std::int32_t s) -> const StageCost& {
    return costs[static_cast<std::size_t>(s)];
  };
  auto recomputed = [&](std::int32_t s, std::int32_t j) {
    return recompute && index_.has(OpKind::Recompute, s, j);
  };
  // What an activation holds once its forward (and recompute) ran: fixed without copies.
  auto resident = [&](std::int32_t s, std::int32_t j) {
    const bool r = recomputed(s, j);
    return forward_allocation(cost(s), r) + (r ? cost(s).activation : Bytes::zero());
  };
  auto backward_freed = [&](std::int32_t s, std::int32_t j, bool& unit) {
    unit = false;
    const std::optional<BackwardRelease> r =
        backward_release(cost(s), index_.has(OpKind::Weight, s, j), recomputed(s, j), in_.release);
    if (!r) return Bytes::zero();
    unit = r->unit;
    return std::min(r->bytes, resident(s, j));
  };
  std::uint64_t arrivals = 0, completed = 0;
  std::array<Transfer, 4> transfers{};
  while (!work.empty()) {
    const std::int32_t d = work.back();
    work.pop_back();
    const auto dd = static_cast<std::size_t>(d);
    const std::uint32_t end_node = index_.device_end(d);
    std::uint32_t n = head[dd];
    Time free = free_at[dd];
    DeviceMemory& mem = memory_[dd];
    for (; n < end_node; ++n) {
      const Op& op = index_.op(d, n);
      // Pull the producers' end times; park when one has not run yet.
      Time ready = Time::zero(), local = Time::zero();
      std::size_t sends = 0, delayed = 0;
      bool blocked = false;
      for_each_producer(
          op, stages, [&](OpKind kind, std::int32_t s, std::int32_t j, DependencyKind dep) {
            const std::uint32_t p = index_.find(kind, s, j);
            if (p == OpIndex::kNone || p == n || blocked) return;
            const Time end = times[p].end;
            if (end < Time::zero()) {
              blocked = true;
              return;
            }
            local = std::max(local, end);
            const std::int32_t from = table.placement.device_of(s, j);
            if (dep == DependencyKind::Local || !moves_data || from == d) {
              ready = std::max(ready, end);
            } else if (delay) {
              ready = std::max(ready, end + *delay);
              if (*delay > Time::zero()) ++delayed;
            } else {
              transfers[sends++] = Transfer{from, end, cost(transfer_stage(dep, s)).p2p, p};
            }
          });
      if (blocked) {
        parked[dd] = 1;
        break;
      }
      arrivals += delayed;
      for (std::size_t t = 0; t < sends; ++t) {
        const Transfer& x = transfers[t];
        network_.label_next_transfer(x.producer, n);
        const Time at = *network_.send(x.from, d, x.bytes, 0, x.sent);
        if (at > x.sent) ++arrivals;
        ready = std::max(ready, at);
      }
      const Time start = std::max(free, ready);
      const Time waited_from = std::max(local, free);
      if (start > waited_from) exposed_comm_[dd] += start - waited_from;
      const Time end = start + (durations_ != nullptr ? (*durations_)[n]
                                                      : cost_durations_.on(index_, costs, op, d));
      times[n] = OpTiming{start, end};
      free = end;
      ++completed;
      // Memory: allocations at the start, releases at the end, in this device's order.
      switch (op.kind) {
        case OpKind::Forward:
        case OpKind::ForwardBackward:
          mem.allocate(forward_allocation(cost(op.stage), recomputed(op.stage, op.microbatch)),
                       true, start);
          break;
        case OpKind::Recompute:
          mem.allocate(cost(op.stage).activation, false, start);
          break;
        default:
          break;
      }
      if (!in_.memory_budget.empty() && mem.total() > in_.memory_budget[dd]) return false;
      bool unit = false;
      Bytes freed;
      switch (op.kind) {
        case OpKind::Backward:
          freed = backward_freed(op.stage, op.microbatch, unit);
          break;
        case OpKind::ForwardBackward:
          freed = backward_freed(op.backward_stage, op.backward_microbatch, unit);
          break;
        case OpKind::Weight:
          freed = resident(op.stage, op.microbatch) - backward_freed(op.stage, op.microbatch, unit);
          unit = true;
          break;
        default:
          break;
      }
      mem.release(freed, unit);
      // Wake the devices whose next input this op may have produced.
      auto wake = [&](std::int32_t s, std::int32_t j) {
        if (s < 0 || s >= stages) return;
        const auto c = static_cast<std::size_t>(table.placement.device_of(s, j));
        if (parked[c] != 0) {
          parked[c] = 0;
          work.push_back(static_cast<std::int32_t>(c));
        }
      };
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward)
        wake(op.stage + 1, op.microbatch);
      if (op.kind == OpKind::Backward) wake(op.stage - 1, op.microbatch);
      if (op.kind == OpKind::ForwardBackward) wake(op.backward_stage - 1, op.backward_microbatch);
    }
    head[dd] = n;
    free_at[dd] = free;
  }
  events_ = completed + arrivals;
  return completed == index_.size();
}

}  // namespace bubblesim
