#include "sim/engine/event_loop.h"

#include <fmt/format.h>

#include <algorithm>

namespace bubblesim {

EventLoop::EventLoop(const OpGraph& graph, const std::vector<Time>& durations,
                     NetworkModel& network, MemoryAccounting& memory,
                     const std::vector<EngineObserver*>& observers, ReplayStart start,
                     std::vector<EngineComponent*> components)
    : graph_(graph),
      durations_(durations),
      network_(network),
      memory_(memory),
      observers_(observers),
      components_(std::move(components)),
      moves_data_(network.moves_data()) {
  streams_.device_start = std::move(start.device_start);
  sends_.next_transfer_id = start.first_transfer_id;
  const std::uint32_t n = graph.size();
  state_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) state_[i].deps_remaining = graph.dependencies(i);
  const std::size_t slots = graph.stream_slots();
  streams_.cursor.assign(slots, 0);
  streams_.busy.assign(slots, false);
  streams_.free_at.assign(slots, Time::zero());
  times_.timings = OpTimings(graph.index().ops_per_device());
  const auto devices = static_cast<std::size_t>(graph.devices());
  times_.exposed_comm.assign(devices, Time::zero());
  times_.exposed_offload.assign(devices, Time::zero());
  queue_.reserve(devices * 4 + 16);
  for (std::size_t c = 0; c < components_.size(); ++c)
    components_[c]->attach(*this, static_cast<std::uint8_t>(c));
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
    if ((times_.events & 0xFFFF) == 0 && progress_) progress_(event.time, times_.events);
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
    case EventType::Release:
      free_slot(event.payload, event.time);
      break;
    case EventType::Component:
      components_[event.owner]->on_event(event.payload, event.time);
      break;
  }
}

void EventLoop::schedule_network(Time at, std::uint32_t payload) {
  queue_.push(at, kPriorityNetwork, EventType::Network, payload);
}

void EventLoop::transfer_arrived(std::uint32_t token, Time at, Time now) {
  const PendingSend s = sends_.pending[token];
  sends_.free.push_back(token);
  send_arrived(s, at, now);
}

void EventLoop::send_arrived(const PendingSend& s, Time at, Time now) {
  notify_transfer(true, s.id, s.producer, s.target, s.bytes, at);
  for (EngineComponent* c : components_) c->on_send_arrived(s.producer, at);
  deliver_remote(s.target, at, now);
}

void EventLoop::release(std::size_t slot, Time at) {
  queue_.push(at, kPriorityEnd, EventType::Release, static_cast<std::uint32_t>(slot));
}

void EventLoop::free_slot(std::size_t slot, Time now) {
  streams_.busy[slot] = false;
  streams_.free_at[slot] = now;
  try_start(slot, now);
}

void EventLoop::copy_finished(std::uint32_t token, Time at) {
  queue_.push(at, kPriorityEnd, EventType::OpEnd, token);
}

void EventLoop::component_token(std::uint8_t owner, std::uint32_t token, Time at) {
  schedule(owner, at, token);
}

void EventLoop::schedule(std::uint8_t owner, Time at, std::uint32_t payload) {
  queue_.push(at, components_[owner]->event_priority(), EventType::Component, payload, owner);
}

std::optional<Time> EventLoop::remote_ready(std::uint32_t n) const {
  const NodeState& s = state_[n];
  if (!s.remote) return std::nullopt;
  return s.remote_ready;
}

void EventLoop::try_start(std::size_t slot, Time now) {
  if (streams_.busy[slot]) return;
  const auto& ops = graph_.stream_ops(slot);
  const std::size_t cursor = streams_.cursor[slot];
  if (cursor >= ops.size()) return;
  const std::uint32_t n = ops[cursor];
  if (state_[n].deps_remaining > 0) return;
  if (graph_.stream(n) == 0) {
    for (EngineComponent* c : components_) {
      if (!c->admits(slot, n, now)) return;
    }
  }
  start(n, now);
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
    Time idle;  // what components idled the stream for just before: not a wait for data
    for (EngineComponent* c : components_) idle += c->idle_before(slot, n, now);
    const Time waited = now - idle;  // the waits below end where that idle time begins
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
    // A component may run the op (it ends when the component says); the end the others see is
    // its compute's.
    std::optional<Time> taken;
    for (EngineComponent* c : components_) {
      if (!taken) taken = c->run(n, now, durations_[n]);
    }
    const Time end = taken.value_or(now + durations_[n]);
    for (EngineComponent* c : components_) c->on_compute_start(n, now, end);
    release_copies_after(n, now);
    if (!taken) queue_.push(end, kPriorityEnd, EventType::OpEnd, n);
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
  // A component may hold the stream past the op's end (it releases it later); otherwise the
  // stream is free now.
  const bool compute = graph_.stream(n) == 0;
  bool held = false;
  if (compute) {
    for (EngineComponent* c : components_) held = c->holds_stream(n, now) || held;
  }
  if (!held) {
    streams_.busy[slot] = false;
    streams_.free_at[slot] = now;
  }
  memory_.on_end(n, now);
  if (compute) {
    for (EngineComponent* c : components_) c->on_compute_end(n, now);
  }
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
  const PendingSend pending{producer, e.target, id, e.bytes};
  if (at) {
    send_arrived(pending, *at, now);
    return;
  }
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
      case StalledFlow::Kind::Component:
        stalled.push_back(components_[f.owner]->describe_stalled(f.remaining_bytes));
        break;
    }
  }
  if (!stalled.empty()) msg += fmt::format("; stalled on a cut link: {}", fmt::join(stalled, ", "));
  return msg;
}

}  // namespace bubblesim
