#include "sim/engine/event_loop.h"

#include <fmt/format.h>

#include <algorithm>

namespace bubblesim {

EventLoop::EventLoop(const OpGraph& graph, const std::vector<Time>& durations,
                     NetworkModel& network, MemoryAccounting& memory, GradientSync* sync,
                     const std::vector<EngineObserver*>& observers, ReplayStart start,
                     ExpertExchange* exchange)
    : graph_(graph),
      durations_(durations),
      network_(network),
      memory_(memory),
      sync_(sync),
      exchange_(exchange),
      observers_(observers),
      moves_data_(network.moves_data()),
      p2p_(start.p2p),
      sync_gap_(start.p2p == P2pMode::Blocking ? start.sync_gap : Time::zero()) {
  streams_.device_start = std::move(start.device_start);
  sends_.next_transfer_id = start.first_transfer_id;
  const std::uint32_t n = graph.size();
  state_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) state_[i].deps_remaining = graph.dependencies(i);
  const std::size_t slots = graph.stream_slots();
  streams_.cursor.assign(slots, 0);
  streams_.busy.assign(slots, false);
  streams_.free_at.assign(slots, Time::zero());
  if (p2p_ == P2pMode::Blocking) streams_.holds.assign(slots, Hold{});
  if (sync_gap_ > Time::zero()) {
    streams_.sent_last.assign(slots, false);
    streams_.gap_pending.assign(slots, false);
  }
  times_.timings = OpTimings(graph.index().ops_per_device());
  const auto devices = static_cast<std::size_t>(graph.devices());
  times_.exposed_comm.assign(devices, Time::zero());
  times_.exposed_offload.assign(devices, Time::zero());
  times_.blocked_send.assign(devices, Time::zero());
  times_.host_gap.assign(devices, Time::zero());
  queue_.reserve(devices * 4 + 16);
}

void EventLoop::run() {
  network_.begin(*this);
  for (std::size_t slot = 0; slot < graph_.stream_slots(); ++slot) {
    const std::size_t d = slot / OpGraph::kStreams;
    if (d < streams_.device_start.size() && streams_.device_start[d] > Time::zero()) {
      // A later iteration: the device's streams open when its previous iteration has ended.
      streams_.busy[slot] = true;
      queue_.push(streams_.device_start[d], kPriorityEnd, EventType::Release,
                  static_cast<std::uint32_t>(slot));
    } else {
      try_start(slot, Time::zero());
    }
  }
  while (!queue_.empty()) {
    const Event event = queue_.pop();
    ++times_.events;
    dispatch(event);
  }
  for (OpTiming& t : times_.timings.all()) {
    if (t.end < Time::zero()) t.start = Time::from_ps(-1);  // started, cut off by a deadlock
  }
}

void EventLoop::dispatch(const Event& event) {
  switch (event.type) {
    case EventType::OpEnd:
      finish(event.payload, event.time);
      break;
    case EventType::Arrival:
      arrive(event.payload, event.time);
      break;
    case EventType::Network:
      network_.on_event(event.payload, event.time);
      break;
    case EventType::Sync:
      sync_->on_token(event.payload, event.time);
      break;
    case EventType::Release:
      release(event.payload, event.time);
      break;
    case EventType::Exchange:
      if (const std::int64_t n = exchange_->on_token(event.payload, event.time); n >= 0)
        finish(static_cast<std::uint32_t>(n), event.time);
      break;
    case EventType::HostGap:
      streams_.gap_pending[event.payload] = false;
      try_start(event.payload, event.time);
      break;
  }
}

void EventLoop::schedule_network(Time at, std::uint32_t payload) {
  queue_.push(at, kPriorityNetwork, EventType::Network, payload);
}

void EventLoop::transfer_arrived(std::uint32_t token, Time at, Time now) {
  const PendingSend s = sends_.pending[token];
  sends_.free.push_back(token);
  notify_transfer(true, s.id, s.producer, s.target, s.bytes, at);
  if (s.holds) hold_arrived(OpGraph::slot(graph_.device(s.producer), 0), at);
  deliver_remote(s.target, at, now);
}

void EventLoop::hold_arrived(std::size_t slot, Time at) {
  Hold& h = streams_.holds[slot];
  if (at > h.until) h.until = at;
  if (--h.sends > 0) return;
  const auto d = slot / OpGraph::kStreams;
  const Time held = h.until - h.since;
  times_.blocked_send[d] += held;
  times_.exposed_comm[d] += held;
  if (!observers_.empty()) {
    const std::uint32_t op = graph_.stream_ops(slot)[streams_.cursor[slot] - 1];
    const HoldEvent e{static_cast<std::int32_t>(d), graph_.position(op), graph_.op(op), h.since,
                      h.until};
    for (EngineObserver* o : observers_) o->on_send_hold(e);
  }
  queue_.push(h.until, kPriorityEnd, EventType::Release, static_cast<std::uint32_t>(slot));
}

void EventLoop::release(std::size_t slot, Time now) {
  streams_.busy[slot] = false;
  streams_.free_at[slot] = now;
  try_start(slot, now);
}

void EventLoop::copy_finished(std::uint32_t token, Time at) {
  queue_.push(at, kPriorityEnd, EventType::OpEnd, token);
}

void EventLoop::sync_token(std::uint32_t token, Time at) {
  queue_.push(at, kPriorityNetwork, EventType::Sync, token);
}

void EventLoop::exchange_token(std::uint32_t token, Time at) {
  queue_.push(at, kPriorityEnd, EventType::Exchange, token);
}

void EventLoop::try_start(std::size_t slot, Time now) {
  if (streams_.busy[slot]) return;
  const auto& ops = graph_.stream_ops(slot);
  const std::size_t cursor = streams_.cursor[slot];
  if (cursor >= ops.size()) return;
  const std::uint32_t n = ops[cursor];
  if (state_[n].deps_remaining > 0) return;
  if (sync_gap_ > Time::zero() && graph_.stream(n) == 0 && waits_for_host_gap(slot, n, now)) return;
  start(n, now);
}

std::optional<Time> EventLoop::p2p_call_end(std::size_t slot, std::uint32_t n) const {
  // Megatron's batched send/receive: one call sends the previous op's output and receives this
  // op's input; with batch_p2p_sync it ends in a device synchronisation (docs/iterations.md).
  const NodeState& s = state_[n];
  if (!streams_.sent_last[slot] && !s.remote) return std::nullopt;
  return std::max(streams_.free_at[slot], s.remote ? s.remote_ready : Time::zero());
}

bool EventLoop::waits_for_host_gap(std::size_t slot, std::uint32_t n, Time now) {
  const std::optional<Time> call_end = p2p_call_end(slot, n);
  if (!call_end) return false;
  const Time due = *call_end + sync_gap_;
  if (now >= due) return false;
  if (!streams_.gap_pending[slot]) {
    streams_.gap_pending[slot] = true;
    queue_.push(due, kPriorityEnd, EventType::HostGap, static_cast<std::uint32_t>(slot));
  }
  return true;
}

void EventLoop::start(std::uint32_t n, Time now) {
  const std::int32_t device = graph_.device(n);
  const std::uint8_t stream = graph_.stream(n);
  const std::size_t slot = OpGraph::slot(device, stream);
  const auto d = static_cast<std::size_t>(device);
  streams_.busy[slot] = true;
  times_.timings.all()[n].start = now;
  if (stream == 0) {
    const NodeState& s = state_[n];
    Time gap;  // the host gap after this op's p2p call, idle but not communication
    if (sync_gap_ > Time::zero()) {
      if (const std::optional<Time> call_end = p2p_call_end(slot, n)) {
        gap = std::min(sync_gap_, now - std::min(now, *call_end));
        times_.host_gap[d] += gap;
        if (gap > Time::zero()) notify_host_gap(device, n, now - gap, now);
      }
    }
    const Time waited = now - gap;  // the waits below end where the host gap begins
    Time local = std::max(s.local_ready, streams_.free_at[slot]);
    if (waited > local) times_.exposed_comm[d] += waited - local;
    // Waiting for a reload beyond every other dependency (the reload ends last, so that wait is
    // not communication: local_ready includes the reload's end).
    Time other = std::max(s.other_ready, streams_.free_at[slot]);
    if (waited > other) times_.exposed_offload[d] += waited - other;
  }
  const Bytes copy_bytes = memory_.on_start(n, now);
  const Op& op = graph_.op(n);
  for (EngineObserver* o : observers_) o->on_op_start(OpEvent{device, graph_.position(n), op, now});
  if (stream == 0) {
    // With the all-to-all as flows the op ends when the exchange says (its compute part is
    // what the gradient buckets and the trace's TP slice see).
    const std::optional<Time> exchanged =
        exchange_ != nullptr ? exchange_->start(n, now, durations_[n]) : std::nullopt;
    const Time end = exchanged.value_or(now + durations_[n]);
    if (sync_ != nullptr) sync_->on_compute_start(device, graph_.position(n), now, end);
    release_copies_after(n, now);
    if (!exchanged) queue_.push(end, kPriorityEnd, EventType::OpEnd, n);
    return;
  }
  const CopyDirection direction =
      op.kind == OpKind::Offload ? CopyDirection::DeviceToHost : CopyDirection::HostToDevice;
  if (std::optional<Time> end = network_.copy(device, direction, copy_bytes, n, now))
    queue_.push(*end, kPriorityEnd, EventType::OpEnd, n);
}

void EventLoop::release_copies_after(std::uint32_t n, Time now) {
  // The copy ops listed right after compute op n wait for its start (see OpGraph).
  const std::uint32_t end = graph_.device_end(graph_.device(n));
  for (std::uint32_t c = n + 1; c < end && graph_.stream(c) != 0; ++c) arrive(c, now);
}

void EventLoop::finish(std::uint32_t n, Time now) {
  times_.timings.all()[n].end = now;
  ++times_.completed;
  const std::int32_t device = graph_.device(n);
  const std::size_t slot = OpGraph::slot(device, graph_.stream(n));
  ++streams_.cursor[slot];
  // Blocking p2p: a compute op that sends to another device holds its stream until every send
  // has arrived (hold_arrived releases it), otherwise the stream is free now; with a host gap,
  // the op after it waits for the gap.
  const bool compute = graph_.stream(n) == 0;
  std::int32_t remote_edges = 0;
  if (compute && p2p_ == P2pMode::Blocking) {
    for (const Edge& edge : graph_.edges(n)) remote_edges += edge.kind != EdgeKind::Local ? 1 : 0;
  }
  const std::int32_t held_sends = moves_data_ ? remote_edges : 0;
  if (sync_gap_ > Time::zero() && compute) streams_.sent_last[slot] = remote_edges > 0;
  if (held_sends > 0) {
    streams_.holds[slot] = Hold{held_sends, now, now};
  } else {
    streams_.busy[slot] = false;
    streams_.free_at[slot] = now;
  }
  memory_.on_end(n, now);
  if (sync_ != nullptr && compute) sync_->on_compute_end(device, graph_.position(n), now);
  const Op& op = graph_.op(n);
  for (EngineObserver* o : observers_) o->on_op_end(OpEvent{device, graph_.position(n), op, now});
  const bool reload = op.kind == OpKind::Reload;
  for (const Edge& edge : graph_.edges(n)) {
    NodeState& target = state_[edge.target];
    if (now > target.local_ready) target.local_ready = now;
    if (edge.kind != EdgeKind::Local) {
      target.remote = true;
      if (now > target.remote_ready) target.remote_ready = now;  // its arrival, below, raises it
    }
    if (edge.kind == EdgeKind::Local || !moves_data_) {
      deliver(edge.target, now, now, !reload);
    } else {
      send(n, edge, now);
    }
  }
  try_start(slot, now);
}

void EventLoop::notify_host_gap(std::int32_t device, std::uint32_t n, Time start, Time end) const {
  if (observers_.empty()) return;
  const HoldEvent e{device, graph_.position(n), graph_.op(n), start, end, true};
  for (EngineObserver* o : observers_) o->on_send_hold(e);
}

void EventLoop::notify_transfer(bool end, std::uint32_t id, std::uint32_t producer,
                                std::uint32_t target, Bytes bytes, Time time) const {
  if (observers_.empty()) return;
  const TransferEvent e{id,   graph_.device(producer), graph_.device(target), bytes,
                        time, graph_.op(producer),     graph_.op(target)};
  for (EngineObserver* o : observers_) {
    if (end)
      o->on_transfer_end(e);
    else
      o->on_transfer_start(e);
  }
}

void EventLoop::send(std::uint32_t producer, const Edge& e, Time now) {
  const std::uint32_t id = sends_.next_transfer_id++;
  notify_transfer(false, id, producer, e.target, e.bytes, now);
  const auto token =
      sends_.free.empty() ? static_cast<std::uint32_t>(sends_.pending.size()) : sends_.free.back();
  network_.label_next_transfer(producer, e.target);
  std::optional<Time> at =
      network_.send(graph_.device(producer), graph_.device(e.target), e.bytes, token, now);
  const bool holds = p2p_ == P2pMode::Blocking && graph_.stream(producer) == 0;
  if (at) {
    notify_transfer(true, id, producer, e.target, e.bytes, *at);
    if (holds) hold_arrived(OpGraph::slot(graph_.device(producer), 0), *at);
    deliver_remote(e.target, *at, now);
    return;
  }
  const PendingSend pending{producer, e.target, id, e.bytes, holds};
  if (sends_.free.empty()) {
    sends_.pending.push_back(pending);
  } else {
    sends_.free.pop_back();
    sends_.pending[token] = pending;
  }
}

void EventLoop::deliver(std::uint32_t target, Time at, Time now, bool counts_for_offload) {
  NodeState& node = state_[target];
  if (counts_for_offload && at > node.other_ready) node.other_ready = at;
  if (at <= now) {
    arrive(target, now);
    return;
  }
  if (at > node.ready) node.ready = at;
  queue_.push(at, kPriorityArrival, EventType::Arrival, target);
}

void EventLoop::deliver_remote(std::uint32_t target, Time at, Time now) {
  if (at > state_[target].remote_ready) state_[target].remote_ready = at;
  deliver(target, at, now);
}

void EventLoop::arrive(std::uint32_t target, Time now) {
  NodeState& node = state_[target];
  if (now > node.ready) node.ready = now;
  if (--node.deps_remaining == 0) {
    try_start(OpGraph::slot(graph_.device(target), graph_.stream(target)), now);
  }
}

std::string EventLoop::describe_deadlock() const {
  std::vector<std::string> blocked;
  std::size_t shown = 0, total = 0;
  for (std::size_t slot = 0; slot < graph_.stream_slots(); ++slot) {
    const auto& ops = graph_.stream_ops(slot);
    if (streams_.cursor[slot] >= ops.size()) continue;
    ++total;
    if (shown >= 16) continue;
    ++shown;
    const std::uint32_t head = ops[streams_.cursor[slot]];
    // Name the dependencies that never finished.
    std::vector<std::string> waiting;
    for (std::uint32_t n = 0; n < graph_.size(); ++n) {
      if (times_.timings.all()[n].end >= Time::zero()) continue;
      for (const Edge& e : graph_.edges(n)) {
        if (e.target == head) {
          waiting.push_back(
              fmt::format("{} on device {}", to_string(graph_.op(n)), graph_.device(n)));
        }
      }
    }
    blocked.push_back(fmt::format("device {} is blocked at {} (position {}), waiting for {}",
                                  graph_.device(head), to_string(graph_.op(head)),
                                  graph_.position(head),
                                  waiting.empty() ? std::string("nothing (unreachable)")
                                                  : fmt::format("{}", fmt::join(waiting, ", "))));
  }
  std::string msg =
      fmt::format("deadlock: {} of {} ops finished; ", times_.completed, graph_.size());
  msg += fmt::format("{}", fmt::join(blocked, "; "));
  if (total > shown) msg += fmt::format("; and {} more blocked streams", total - shown);
  // Transfers that never finished: their links were cut (or degraded to nothing).
  std::vector<std::string> stalled;
  for (const StalledFlow& f : network_.stalled(8)) {
    switch (f.kind) {
      case StalledFlow::Kind::Copy:
        stalled.push_back(fmt::format("copy {} on device {}", to_string(graph_.op(f.token)),
                                      graph_.device(f.token)));
        break;
      case StalledFlow::Kind::Send: {
        const PendingSend& s = sends_.pending[f.token];
        stalled.push_back(fmt::format(
            "transfer {} (device {}) -> {} (device {}) with {:.0f} of {} left",
            to_string(graph_.op(s.producer)), graph_.device(s.producer),
            to_string(graph_.op(s.target)), graph_.device(s.target), f.remaining_bytes, s.bytes));
        break;
      }
      case StalledFlow::Kind::Collective:
        stalled.push_back(
            fmt::format("a gradient-sync flow with {:.0f} bytes left", f.remaining_bytes));
        break;
      case StalledFlow::Kind::Exchange:
        stalled.push_back(
            fmt::format("an expert all-to-all flow with {:.0f} bytes left", f.remaining_bytes));
        break;
    }
  }
  if (!stalled.empty()) msg += fmt::format("; stalled on a cut link: {}", fmt::join(stalled, ", "));
  return msg;
}

}  // namespace bubblesim
