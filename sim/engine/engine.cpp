#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "schedules/table_index.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/flow_network.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/metrics.h"

namespace bubblesim {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
constexpr std::uint32_t kCollective =
    0xfffffffeu;  // PendingTransfer.producer of a gradient-sync flow
constexpr int kStreams = 3;

// Event priorities at equal time: ends free memory before arrivals start new ops.
constexpr std::uint8_t kPriorityEnd = 0;
constexpr std::uint8_t kPriorityNetwork = 1;
constexpr std::uint8_t kPriorityArrival = 2;

enum class EdgeKind : std::uint8_t { Local, ForwardActivation, BackwardGradient };

struct Edge {
  std::uint32_t target;
  EdgeKind kind;
  Bytes bytes;
};

struct Node {
  const Op* op = nullptr;
  std::int32_t device = 0;
  std::int32_t position = 0;
  std::uint8_t stream = 0;
  bool done = false;
  bool started = false;
  // Looked up once in build() instead of in the TableIndex on every start / finish.
  bool forward_recomputed = false;   // F, F&B: an R exists for the forward (stage, microbatch)
  bool backward_split = false;       // B, F&B: a W exists for the backward (stage, microbatch)
  bool backward_recomputed = false;  // B, F&B: an R exists for the backward (stage, microbatch)
  Time duration;
  std::int32_t deps_remaining = 0;
  Time ready;        // latest arrival of a dependency
  Time local_ready;  // latest end of a producer (arrival without communication)
  Time other_ready;  // latest arrival of a dependency other than a reload (exposed offload)
  Bytes copy_bytes;  // O / L: the bytes this copy moves (fixed when it starts)
  Time start_time;
  Time end_time;
  std::uint32_t edges_begin = 0, edges_end = 0;
};

struct PendingTransfer {
  std::uint32_t target;
  std::uint32_t producer;
  Time latency;
  Bytes bytes;
  std::uint32_t id;
};

// One activation (stage, microbatch) and what of it is resident on its device.
struct Activation {
  Bytes resident;
  Bytes offloaded;
  bool counted = false;  // holds one unit of the activation count
};

// `t` times `factor`, rounded to the nearest picosecond; OverflowError when it does not fit.
Time scaled(Time t, double factor) {
  const double ps = std::round(static_cast<double>(t.ps()) * factor);
  if (!std::isfinite(ps) || ps >= 9.2e18 || ps < 0.0) {
    throw OverflowError(
        fmt::format("{} slowed down by {} does not fit in 64-bit picoseconds", t, factor));
  }
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

}  // namespace

struct Engine::State {
  EngineInput in;
  const Table& table;
  TableIndex index;
  std::vector<EngineObserver*> observers;

  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<std::uint32_t> device_offset;            // first node of each device
  std::vector<std::vector<std::uint32_t>> stream_ops;  // [device * 3 + stream] -> nodes in order
  std::vector<std::size_t> stream_cursor;
  std::vector<bool> stream_busy;
  std::vector<Time> stream_free_at;

  EventQueue queue;
  std::uint64_t events = 0;
  std::size_t completed = 0;

  // Network (Topology model).
  std::unique_ptr<FlowNetwork> network;
  std::uint32_t network_version = 0;
  std::vector<PendingTransfer> flow_targets;        // indexed by FlowId
  std::vector<std::optional<Route>> routes;         // [from * devices + to], computed on first use
  std::vector<bool> route_known;                    // [from * devices + to]
  std::vector<FlowNetwork::FlowId> finished_flows;  // scratch for on_network_check
  std::vector<Time> arrival_time_pending;           // per node: arrival events carry only the node
  std::uint32_t next_transfer_id = 0;

  // Memory.
  std::vector<Activation> activations;  // [stage * m + microbatch]
  std::vector<Bytes> static_memory;
  std::vector<Bytes> activation_now, activation_peak, total_peak;
  std::vector<Time> activation_peak_time, total_peak_time;
  std::vector<std::int64_t> count_now, count_peak;
  std::vector<OutOfMemory> oom;
  std::vector<bool> oom_seen;

  std::vector<Time> exposed_comm;
  std::vector<Time> exposed_offload;

  // Offload copies: per device the route to its host and back (Topology), computed once; host
  // memory per host (index into host_names).
  std::vector<std::optional<Route>> d2h_route, h2d_route;
  std::vector<std::size_t> host_of_device;
  std::vector<std::string> host_names;
  std::vector<Bytes> host_now;
  std::vector<bool> host_oom_seen;
  std::vector<Bytes> offloaded;  // per device

  // --- gradient sync (docs/parallelism.md): flows and timers of sim/engine/gradient_sync ---
  struct SyncPort : FlowPort {
    State* state = nullptr;
    void add_flow(const std::vector<LinkId>& links, double bytes, Time latency, std::uint32_t token,
                  Time now) override {
      FlowNetwork::FlowId id = state->network->add(links, bytes, now);
      if (state->flow_targets.size() <= static_cast<std::size_t>(id))
        state->flow_targets.resize(static_cast<std::size_t>(id) + 1);
      state->flow_targets[static_cast<std::size_t>(id)] =
          PendingTransfer{token, kCollective, latency, Bytes::zero(), kNone};
      state->schedule_network_check();
    }
    void add_timer(Time at, std::uint32_t token) override {
      state->queue.push(at, kPriorityNetwork, EventType::Sync, token);
    }
  };
  SyncPort sync_port;
  std::unique_ptr<GradientSync> sync;
  // --- end gradient sync ---

  explicit State(EngineInput input) : in(std::move(input)), table(*in.table), index(table) {}

  const StageCost& cost(std::int32_t stage) const {
    return in.stage_costs[static_cast<std::size_t>(stage)];
  }
  Activation& activation(std::int32_t s, std::int32_t j) {
    return activations[static_cast<std::size_t>(s) * static_cast<std::size_t>(table.microbatches) +
                       static_cast<std::size_t>(j)];
  }
  std::uint32_t node_at(OpLocation loc) const {
    return device_offset[static_cast<std::size_t>(loc.device)] +
           static_cast<std::uint32_t>(loc.position);
  }

  void build();
  // Calls sink(producer, edge) for every dependency of node n (one half of a fused op).
  template <typename Sink>
  void add_dependencies(std::uint32_t n, OpKind kind, std::int32_t s, std::int32_t j, Sink&& sink);
  template <typename Sink>
  void for_each_dependency(Sink&& sink);
  Time duration_of(const Op& op) const;
  void try_start(std::size_t stream_slot, Time now);
  void start(std::uint32_t n, Time now);
  void finish(std::uint32_t n, Time now);
  void deliver(std::uint32_t target, Time at, Time now, bool counts_for_offload = true);
  void setup_offload(std::size_t devices);
  void release_copies_after(std::uint32_t n, Time now);
  void arrive(std::uint32_t target, Time now);
  void send(std::uint32_t producer, const Edge& e, Time now);
  const std::optional<Route>& route_between(std::int32_t from, std::int32_t to);
  void schedule_network_check();
  void on_network_check(Time now);
  void allocate(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes, Time now,
                const Op& op);
  void release(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes, bool release_unit,
               Time now);
  void notify_memory(std::int32_t device, Time now);
  std::string describe_deadlock() const;
  SimulationResult run();
};

void Engine::State::build() {
  const auto devices = static_cast<std::size_t>(table.devices);
  device_offset.resize(devices + 1);
  std::uint32_t total = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    device_offset[d] = total;
    total += static_cast<std::uint32_t>(table.device_ops[d].size());
  }
  device_offset[devices] = total;
  nodes.resize(total);
  stream_ops.assign(devices * kStreams, {});
  for (std::size_t d = 0; d < devices; ++d) {
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      Node& n = nodes[device_offset[d] + i];
      n.op = &table.device_ops[d][i];
      n.device = static_cast<std::int32_t>(d);
      n.position = static_cast<std::int32_t>(i);
      n.stream = static_cast<std::uint8_t>(stream_of(n.op->kind));
      n.duration = duration_of(*n.op);
      if (n.stream == 0 && d < in.compute_slowdown.size() && in.compute_slowdown[d] != 1.0) {
        n.duration = scaled(n.duration, in.compute_slowdown[d]);
      }
      const Op& op = *n.op;
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward) {
        n.forward_recomputed = index.find(OpKind::Recompute, op.stage, op.microbatch).present();
      }
      if (op.kind == OpKind::Backward || op.kind == OpKind::ForwardBackward) {
        const bool fused = op.kind == OpKind::ForwardBackward;
        const std::int32_t s = fused ? op.backward_stage : op.stage;
        const std::int32_t j = fused ? op.backward_microbatch : op.microbatch;
        n.backward_split = index.has_weight(s, j);
        n.backward_recomputed = index.find(OpKind::Recompute, s, j).present();
      }
      stream_ops[d * kStreams + n.stream].push_back(device_offset[d] +
                                                    static_cast<std::uint32_t>(i));
    }
  }
  // Outgoing edges (CSR) for the hot loop, by a counting sort in two passes over the
  // dependencies (count, then fill), which keeps each producer's edges in consumer order and
  // needs no per-node lists.
  std::vector<std::uint32_t> out_count(total, 0);
  for_each_dependency([&](std::uint32_t from, const Edge& e) {
    ++out_count[from];
    ++nodes[e.target].deps_remaining;
  });
  // A copy op (O, L) starts no earlier than the compute op listed before it on its device: the
  // table position of a reload is its prefetch point. Released in start() of that compute op.
  for (std::size_t d = 0; d < devices; ++d) {
    bool seen_compute = false;
    for (std::uint32_t n = device_offset[d]; n < device_offset[d + 1]; ++n) {
      if (nodes[n].stream == 0)
        seen_compute = true;
      else if (seen_compute)
        ++nodes[n].deps_remaining;
    }
  }
  std::uint32_t offset = 0;
  for (std::uint32_t n = 0; n < total; ++n) {
    nodes[n].edges_begin = nodes[n].edges_end = offset;
    offset += out_count[n];
  }
  edges.resize(offset);
  for_each_dependency(
      [&](std::uint32_t from, const Edge& e) { edges[nodes[from].edges_end++] = e; });
}

template <typename Sink>
void Engine::State::for_each_dependency(Sink&& sink) {
  for (std::uint32_t n = 0; n < static_cast<std::uint32_t>(nodes.size()); ++n) {
    const Op& op = *nodes[n].op;
    if (op.kind == OpKind::ForwardBackward) {
      add_dependencies(n, OpKind::Forward, op.stage, op.microbatch, sink);
      add_dependencies(n, OpKind::Backward, op.backward_stage, op.backward_microbatch, sink);
    } else {
      add_dependencies(n, op.kind, op.stage, op.microbatch, sink);
    }
  }
}

template <typename Sink>
void Engine::State::add_dependencies(std::uint32_t n, OpKind kind, std::int32_t s, std::int32_t j,
                                     Sink&& sink) {
  auto depend = [&](OpKind pred_kind, std::int32_t ps, std::int32_t pj, EdgeKind edge_kind,
                    Bytes bytes) {
    OpLocation loc = index.find(pred_kind, ps, pj);
    if (!loc.present()) return;
    std::uint32_t from = node_at(loc);
    if (from == n) return;  // the other half of the same fused op
    if (nodes[from].device == nodes[n].device) edge_kind = EdgeKind::Local;
    sink(from, Edge{n, edge_kind, edge_kind == EdgeKind::Local ? Bytes::zero() : bytes});
  };
  const std::int32_t last = table.stages - 1;
  switch (kind) {
    case OpKind::Forward:
      if (s > 0) depend(OpKind::Forward, s - 1, j, EdgeKind::ForwardActivation, cost(s - 1).p2p);
      break;
    case OpKind::Backward:
      depend(OpKind::Forward, s, j, EdgeKind::Local, Bytes::zero());
      if (s < last) depend(OpKind::Backward, s + 1, j, EdgeKind::BackwardGradient, cost(s).p2p);
      depend(OpKind::Recompute, s, j, EdgeKind::Local, Bytes::zero());
      depend(OpKind::Reload, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::Weight:
      depend(OpKind::Backward, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::Recompute:
      depend(OpKind::Forward, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::Offload:
      depend(OpKind::Forward, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::Reload:
      depend(OpKind::Offload, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::ForwardBackward:
      break;  // expanded by the caller
  }
}

Time Engine::State::duration_of(const Op& op) const {
  auto backward = [&](std::int32_t s, std::int32_t j) {
    return index.has_weight(s, j) ? cost(s).backward_input : cost(s).full_backward();
  };
  switch (op.kind) {
    case OpKind::Forward:
      return cost(op.stage).forward;
    case OpKind::Backward:
      return backward(op.stage, op.microbatch);
    case OpKind::Weight:
      return cost(op.stage).backward_weight;
    case OpKind::Recompute: {
      const StageCost& c = cost(op.stage);
      return c.recompute > Time::zero() ? c.recompute : c.forward;
    }
    case OpKind::ForwardBackward: {
      const StageCost& c = cost(op.stage);
      if (c.fused > Time::zero()) return c.fused;
      return c.forward + backward(op.backward_stage, op.backward_microbatch);
    }
    case OpKind::Offload:
    case OpKind::Reload:
      return Time::zero();  // copy time comes from the PCIe route (Topology) in finish/start
  }
  return Time::zero();
}

void Engine::State::notify_memory(std::int32_t device, Time now) {
  auto d = static_cast<std::size_t>(device);
  for (EngineObserver* o : observers)
    o->on_memory(device, now, activation_now[d], activation_now[d] + static_memory[d]);
}

void Engine::State::allocate(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes,
                             Time now, const Op& op) {
  auto d = static_cast<std::size_t>(device);
  Activation& a = activation(s, j);
  a.resident += bytes;
  activation_now[d] += bytes;
  if (!a.counted) {
    a.counted = true;
    if (++count_now[d] > count_peak[d]) count_peak[d] = count_now[d];
  }
  if (activation_now[d] > activation_peak[d]) {
    activation_peak[d] = activation_now[d];
    activation_peak_time[d] = now;
  }
  Bytes total = activation_now[d] + static_memory[d];
  if (total > total_peak[d]) {
    total_peak[d] = total;
    total_peak_time[d] = now;
  }
  if (!in.memory_budget.empty()) {
    Bytes budget = in.memory_budget[d];
    if (total > budget && !oom_seen[d]) {
      oom_seen[d] = true;
      oom.push_back(OutOfMemory{.device = device,
                                .host = {},
                                .time = now,
                                .op = to_string(op),
                                .over = total - budget,
                                .budget = budget});
    }
  }
  if (!observers.empty()) notify_memory(device, now);
}

void Engine::State::release(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes,
                            bool release_unit, Time now) {
  auto d = static_cast<std::size_t>(device);
  Activation& a = activation(s, j);
  Bytes freed = std::min(bytes, a.resident);
  a.resident -= freed;
  activation_now[d] -= freed;
  if (release_unit && a.counted) {
    a.counted = false;
    --count_now[d];
  }
  if (!observers.empty()) notify_memory(device, now);
}

void Engine::State::try_start(std::size_t slot, Time now) {
  if (stream_busy[slot]) return;
  const auto& ops = stream_ops[slot];
  std::size_t cursor = stream_cursor[slot];
  if (cursor >= ops.size()) return;
  std::uint32_t n = ops[cursor];
  if (nodes[n].deps_remaining > 0) return;
  start(n, now);
}

void Engine::State::start(std::uint32_t n, Time now) {
  Node& node = nodes[n];
  const Op& op = *node.op;
  const std::size_t slot = static_cast<std::size_t>(node.device) * kStreams + node.stream;
  stream_busy[slot] = true;
  node.started = true;
  node.start_time = now;
  if (node.stream == 0) {
    Time local = std::max(node.local_ready, stream_free_at[slot]);
    if (now > local) exposed_comm[static_cast<std::size_t>(node.device)] += now - local;
    // Waiting for a reload beyond every other dependency (the reload ends last, so that wait is
    // not communication: local_ready includes the reload's end).
    Time other = std::max(node.other_ready, stream_free_at[slot]);
    if (now > other) exposed_offload[static_cast<std::size_t>(node.device)] += now - other;
  }
  // Allocation at start: F (or its recompute input), R, L, the forward half of F&B.
  auto forward_alloc = [&](std::int32_t s, std::int32_t j) {
    allocate(node.device, s, j, node.forward_recomputed ? cost(s).stage_input : cost(s).activation,
             now, op);
  };
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::ForwardBackward:
      forward_alloc(op.stage, op.microbatch);
      break;
    case OpKind::Recompute:
      allocate(node.device, op.stage, op.microbatch, cost(op.stage).activation, now, op);
      break;
    case OpKind::Reload: {
      // Brings back what its offload moved; allocated when the H2D copy starts.
      Activation& a = activation(op.stage, op.microbatch);
      node.copy_bytes = a.offloaded;
      a.offloaded = Bytes::zero();
      allocate(node.device, op.stage, op.microbatch, node.copy_bytes, now, op);
      break;
    }
    case OpKind::Offload: {
      // Moves what is resident now (only the stage input when the activation is recomputed);
      // host memory is taken when the copy starts, device memory freed when it ends.
      const auto d = static_cast<std::size_t>(node.device);
      node.copy_bytes = activation(op.stage, op.microbatch).resident;
      offloaded[d] += node.copy_bytes;
      const std::size_t h = host_of_device[d];
      host_now[h] += node.copy_bytes;
      if (in.host_capacity && host_now[h] > *in.host_capacity && !host_oom_seen[h]) {
        host_oom_seen[h] = true;
        oom.push_back(OutOfMemory{.device = node.device,
                                  .host = host_names[h],
                                  .time = now,
                                  .op = to_string(op),
                                  .over = host_now[h] - *in.host_capacity,
                                  .budget = *in.host_capacity});
      }
      break;
    }
    default:
      break;
  }
  for (EngineObserver* o : observers) o->on_op_start(OpEvent{node.device, node.position, op, now});
  if (node.stream == 0) {
    if (sync) sync->on_compute_start(node.device, node.position, now, now + node.duration);
    release_copies_after(n, now);
    queue.push(now + node.duration, kPriorityEnd, EventType::OpEnd, n);
    return;
  }
  // A copy: a flow over the precomputed route between the GPU and its host (Topology), or a
  // private link of offload_bandwidth, or free (idealized).
  const auto d = static_cast<std::size_t>(node.device);
  const Bytes bytes = node.copy_bytes;
  if (network && bytes > Bytes::zero()) {
    const std::optional<Route>& route = op.kind == OpKind::Offload ? d2h_route[d] : h2d_route[d];
    if (route && !route->links.empty()) {
      FlowNetwork::FlowId id = network->add(route->links, bytes.as_double(), now);
      if (flow_targets.size() <= static_cast<std::size_t>(id))
        flow_targets.resize(static_cast<std::size_t>(id) + 1);
      flow_targets[static_cast<std::size_t>(id)] =
          PendingTransfer{n, kNone, route->latency, bytes, kNone};
      schedule_network_check();
      return;
    }
  }
  Time copy = in.offload_bandwidth && bytes > Bytes::zero()
                  ? transfer_time(bytes, *in.offload_bandwidth)
                  : Time::zero();
  queue.push(now + copy, kPriorityEnd, EventType::OpEnd, n);
}

void Engine::State::release_copies_after(std::uint32_t n, Time now) {
  // The copy ops listed right after compute op n wait for its start (see build()).
  const std::uint32_t end = device_offset[static_cast<std::size_t>(nodes[n].device) + 1];
  for (std::uint32_t c = n + 1; c < end && nodes[c].stream != 0; ++c) arrive(c, now);
}

void Engine::State::setup_offload(std::size_t devices) {
  offloaded.assign(devices, Bytes::zero());
  host_of_device.assign(devices, 0);
  d2h_route.assign(devices, std::nullopt);
  h2d_route.assign(devices, std::nullopt);
  host_names.clear();
  if (network) {
    std::vector<VertexId> host_vertex;
    for (std::size_t d = 0; d < devices; ++d) {
      VertexId gpu = in.device_vertex[d];
      std::optional<VertexId> host = in.topology->nearest_host(gpu);
      if (!host) continue;
      auto it = std::find(host_vertex.begin(), host_vertex.end(), *host);
      host_of_device[d] = static_cast<std::size_t>(it - host_vertex.begin());
      if (it == host_vertex.end()) {
        host_vertex.push_back(*host);
        host_names.push_back(in.topology->vertex_name(*host));
      }
      d2h_route[d] = in.topology->route(gpu, *host);
      h2d_route[d] = in.topology->route(*host, gpu);
    }
  }
  if (host_names.empty()) host_names.push_back("host");
  host_now.assign(host_names.size(), Bytes::zero());
  host_oom_seen.assign(host_names.size(), false);
}

void Engine::State::finish(std::uint32_t n, Time now) {
  Node& node = nodes[n];
  const Op& op = *node.op;
  node.done = true;
  node.end_time = now;
  ++completed;
  const std::size_t slot = static_cast<std::size_t>(node.device) * kStreams + node.stream;
  stream_busy[slot] = false;
  stream_free_at[slot] = now;
  ++stream_cursor[slot];
  // Release at the end: B, W, O and the backward half of F&B.
  auto backward_release = [&](std::int32_t s, std::int32_t j) {
    const StageCost& c = cost(s);
    const bool split = node.backward_split;
    Bytes input = node.backward_recomputed ? c.stage_input : Bytes::zero();
    if (!split) {
      release(node.device, s, j, c.activation + input, true, now);
    } else if (in.release == ReleaseConvention::Split) {
      release(node.device, s, j, c.activation - std::min(c.weight_grad, c.activation) + input,
              false, now);
    }
  };
  switch (op.kind) {
    case OpKind::Backward:
      backward_release(op.stage, op.microbatch);
      break;
    case OpKind::ForwardBackward:
      backward_release(op.backward_stage, op.backward_microbatch);
      break;
    case OpKind::Weight:
      release(node.device, op.stage, op.microbatch, activation(op.stage, op.microbatch).resident,
              true, now);
      break;
    case OpKind::Offload:
      activation(op.stage, op.microbatch).offloaded += node.copy_bytes;
      release(node.device, op.stage, op.microbatch, node.copy_bytes, false, now);
      break;
    case OpKind::Reload:
      host_now[host_of_device[static_cast<std::size_t>(node.device)]] -= node.copy_bytes;
      break;
    default:
      break;
  }
  for (EngineObserver* o : observers) o->on_op_end(OpEvent{node.device, node.position, op, now});
  for (std::uint32_t e = node.edges_begin; e < node.edges_end; ++e) {
    const Edge& edge = edges[e];
    Node& target = nodes[edge.target];
    if (now > target.local_ready) target.local_ready = now;
    if (edge.kind == EdgeKind::Local || in.network == NetworkModel::None) {
      deliver(edge.target, now, now, op.kind != OpKind::Reload);
    } else {
      send(n, edge, now);
    }
  }
  try_start(slot, now);
}

void Engine::State::send(std::uint32_t producer, const Edge& e, Time now) {
  const Node& from = nodes[producer];
  const Node& to = nodes[e.target];
  std::uint32_t id = next_transfer_id++;
  if (!observers.empty()) {
    for (EngineObserver* o : observers) {
      o->on_transfer_start(
          TransferEvent{id, from.device, to.device, e.bytes, now, *from.op, *to.op});
    }
  }
  if (in.network == NetworkModel::FixedDelay) {
    Time at = now + in.fixed_delay;
    if (!observers.empty()) {
      for (EngineObserver* o : observers) {
        o->on_transfer_end(
            TransferEvent{id, from.device, to.device, e.bytes, at, *from.op, *to.op});
      }
    }
    deliver(e.target, at, now);
    return;
  }
  // Topology: a flow over the route, then the route's latency.
  const std::optional<Route>& route = route_between(from.device, to.device);
  Time latency = route ? route->latency : Time::zero();
  if (!route || route->links.empty() || e.bytes <= Bytes::zero()) {
    Time at = now + latency;
    for (EngineObserver* o : observers) {
      o->on_transfer_end(TransferEvent{id, from.device, to.device, e.bytes, at, *from.op, *to.op});
    }
    deliver(e.target, at, now);
    return;
  }
  FlowNetwork::FlowId flow = network->add(route->links, e.bytes.as_double(), now);
  if (flow_targets.size() <= static_cast<std::size_t>(flow))
    flow_targets.resize(static_cast<std::size_t>(flow) + 1);
  flow_targets[static_cast<std::size_t>(flow)] =
      PendingTransfer{e.target, producer, latency, e.bytes, id};
  schedule_network_check();
}

const std::optional<Route>& Engine::State::route_between(std::int32_t from, std::int32_t to) {
  // Only the device pairs that exchange data need a route (a few per device, not p * p).
  const std::size_t k = static_cast<std::size_t>(from) * static_cast<std::size_t>(table.devices) +
                        static_cast<std::size_t>(to);
  if (!route_known[k]) {
    routes[k] = in.topology->route(in.device_vertex[static_cast<std::size_t>(from)],
                                   in.device_vertex[static_cast<std::size_t>(to)]);
    route_known[k] = true;
  }
  return routes[k];
}

void Engine::State::schedule_network_check() {
  ++network_version;
  if (std::optional<Time> t = network->next_completion()) {
    queue.push(*t, kPriorityNetwork, EventType::NetworkCheck, network_version);
  }
}

void Engine::State::on_network_check(Time now) {
  network->complete_finished(now, finished_flows);
  for (FlowNetwork::FlowId f : finished_flows) {
    const PendingTransfer& t = flow_targets[static_cast<std::size_t>(f)];
    if (t.producer == kCollective) {  // gradient sync: arrives after the route latency
      queue.push(now + t.latency, kPriorityNetwork, EventType::Sync, t.target);
      continue;
    }
    Node& node = nodes[t.target];
    if (t.producer == kNone) {
      // An offload or reload copy finished its transfer; the op ends after the route latency.
      queue.push(now + t.latency, kPriorityEnd, EventType::OpEnd, t.target);
      continue;
    }
    Time at = now + t.latency;
    const Node& from = nodes[t.producer];
    for (EngineObserver* o : observers) {
      o->on_transfer_end(
          TransferEvent{t.id, from.device, node.device, t.bytes, at, *from.op, *node.op});
    }
    deliver(t.target, at, now);
  }
  schedule_network_check();
}

void Engine::State::deliver(std::uint32_t target, Time at, Time now, bool counts_for_offload) {
  Node& node = nodes[target];
  if (counts_for_offload && at > node.other_ready) node.other_ready = at;
  if (at <= now) {
    arrive(target, now);
    return;
  }
  if (at > node.ready) node.ready = at;
  queue.push(at, kPriorityArrival, EventType::Arrival, target);
}

void Engine::State::arrive(std::uint32_t target, Time now) {
  Node& node = nodes[target];
  if (now > node.ready) node.ready = now;
  if (--node.deps_remaining == 0) {
    try_start(static_cast<std::size_t>(node.device) * kStreams + node.stream, now);
  }
}

std::string Engine::State::describe_deadlock() const {
  std::vector<std::string> blocked;
  std::size_t shown = 0, total = 0;
  for (std::size_t slot = 0; slot < stream_ops.size(); ++slot) {
    const auto& ops = stream_ops[slot];
    if (stream_cursor[slot] >= ops.size()) continue;
    ++total;
    if (shown >= 16) continue;
    ++shown;
    const Node& head = nodes[ops[stream_cursor[slot]]];
    // Name the dependencies that never finished.
    std::vector<std::string> waiting;
    for (std::uint32_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].done) continue;
      for (std::uint32_t e = nodes[n].edges_begin; e < nodes[n].edges_end; ++e) {
        if (edges[e].target == ops[stream_cursor[slot]]) {
          waiting.push_back(
              fmt::format("{} on device {}", to_string(*nodes[n].op), nodes[n].device));
        }
      }
    }
    blocked.push_back(fmt::format("device {} is blocked at {} (position {}), waiting for {}",
                                  head.device, to_string(*head.op), head.position,
                                  waiting.empty() ? std::string("nothing (unreachable)")
                                                  : fmt::format("{}", fmt::join(waiting, ", "))));
  }
  std::string msg = fmt::format("deadlock: {} of {} ops finished; ", completed, nodes.size());
  msg += fmt::format("{}", fmt::join(blocked, "; "));
  if (total > shown) msg += fmt::format("; and {} more blocked streams", total - shown);
  if (network && network->active_flows() > 0) {
    // Transfers that never finished: their links were cut (or degraded to nothing).
    std::vector<std::string> stalled;
    for (std::size_t f = 0; f < flow_targets.size() && stalled.size() < 8; ++f) {
      const auto id = static_cast<FlowNetwork::FlowId>(f);
      if (!network->is_active(id)) continue;
      const PendingTransfer& t = flow_targets[f];
      const Node& to = nodes[t.target];
      if (t.producer == kNone) {
        stalled.push_back(fmt::format("copy {} on device {}", to_string(*to.op), to.device));
      } else {
        const Node& from = nodes[t.producer];
        stalled.push_back(fmt::format(
            "transfer {} (device {}) -> {} (device {}) with {:.0f} of {} left", to_string(*from.op),
            from.device, to_string(*to.op), to.device, network->remaining_bytes(id), t.bytes));
      }
    }
    msg += fmt::format("; stalled on a cut link: {}", fmt::join(stalled, ", "));
  }
  return msg;
}

SimulationResult Engine::State::run() {
  if (table.devices <= 0 || static_cast<std::int64_t>(table.device_ops.size()) != table.devices) {
    throw std::invalid_argument("the engine needs a validated table");
  }
  if (static_cast<std::int64_t>(in.stage_costs.size()) != table.stages) {
    throw std::invalid_argument(fmt::format("the engine needs costs for {} stages, got {}",
                                            table.stages, in.stage_costs.size()));
  }
  build();
  const auto devices = static_cast<std::size_t>(table.devices);
  stream_cursor.assign(stream_ops.size(), 0);
  stream_busy.assign(stream_ops.size(), false);
  stream_free_at.assign(stream_ops.size(), Time::zero());
  activations.assign(
      static_cast<std::size_t>(table.stages) * static_cast<std::size_t>(table.microbatches), {});
  activation_now.assign(devices, Bytes::zero());
  activation_peak.assign(devices, Bytes::zero());
  activation_peak_time.assign(devices, Time::zero());
  total_peak_time.assign(devices, Time::zero());
  exposed_offload.assign(devices, Time::zero());
  count_now.assign(devices, 0);
  count_peak.assign(devices, 0);
  oom_seen.assign(devices, false);
  exposed_comm.assign(devices, Time::zero());
  static_memory.assign(devices, Bytes::zero());
  {
    // Each distinct stage held by a device costs its static memory once (replicas on other
    // devices count there: weight replication).
    std::vector<std::vector<bool>> holds(
        devices, std::vector<bool>(static_cast<std::size_t>(table.stages), false));
    for (const auto& map : table.placement.device_of_stage) {
      for (std::size_t s = 0; s < map.size(); ++s)
        holds[static_cast<std::size_t>(map[s])][s] = true;
    }
    for (std::size_t d = 0; d < devices; ++d) {
      for (std::size_t s = 0; s < holds[d].size(); ++s) {
        if (holds[d][s]) static_memory[d] += in.stage_costs[s].static_memory;
      }
    }
  }
  total_peak = static_memory;
  if (!in.memory_budget.empty() && in.memory_budget.size() != devices) {
    throw std::invalid_argument("the memory budget needs one value per device");
  }
  if (in.network == NetworkModel::Topology) {
    if (in.topology == nullptr || in.device_vertex.size() != devices) {
      throw std::invalid_argument(
          "the topology network model needs a topology and one GPU vertex per device");
    }
    std::vector<double> capacity(static_cast<std::size_t>(in.topology->link_count()));
    for (LinkId l = 0; l < in.topology->link_count(); ++l) {
      capacity[static_cast<std::size_t>(l)] = in.topology->link_bandwidth(l).bytes_per_second();
    }
    network = std::make_unique<FlowNetwork>(std::move(capacity));
    routes.assign(devices * devices, std::nullopt);
    route_known.assign(devices * devices, false);
  }
  if (!in.compute_slowdown.empty() && in.compute_slowdown.size() != devices) {
    throw std::invalid_argument("the compute slowdown needs one factor per device");
  }
  for (double k : in.compute_slowdown) {
    if (!(k > 0.0) || !std::isfinite(k))
      throw std::invalid_argument("a compute slowdown must be finite and > 0");
  }
  if (!in.link_faults.empty() && !network) {
    throw std::invalid_argument("link faults need the topology network model");
  }
  setup_offload(devices);
  if (in.sync && network) {
    sync_port.state = this;
    sync = std::make_unique<GradientSync>(*in.sync, table, *in.topology, sync_port, observers);
  }
  queue.reserve(devices * 4 + 16);
  for (std::size_t f = 0; f < in.link_faults.size(); ++f) {
    const LinkFault& fault = in.link_faults[f];
    if (fault.link < 0 || fault.link >= in.topology->link_count()) {
      throw std::invalid_argument("a link fault names a link the topology does not have");
    }
    queue.push(fault.at, kPriorityNetwork, EventType::LinkFault, static_cast<std::uint32_t>(f));
  }
  for (std::size_t slot = 0; slot < stream_ops.size(); ++slot) try_start(slot, Time::zero());
  while (!queue.empty()) {
    Event ev = queue.pop();
    ++events;
    switch (ev.type) {
      case EventType::OpEnd:
        finish(ev.payload, ev.time);
        break;
      case EventType::Arrival:
        arrive(ev.payload, ev.time);
        break;
      case EventType::NetworkCheck:
        if (ev.payload == network_version) on_network_check(ev.time);
        break;
      case EventType::LinkFault: {
        const LinkFault& fault = in.link_faults[ev.payload];
        network->set_link_capacity(fault.link, fault.bytes_per_second, ev.time);
        schedule_network_check();  // rates changed: the next completion moved
        break;
      }
      case EventType::Sync:
        sync->on_token(ev.payload, ev.time);
        break;
    }
  }

  SimulationResult result;
  result.events = events;
  result.timings.resize(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    result.timings[d].assign(table.device_ops[d].size(),
                             OpTiming{Time::from_ps(-1), Time::from_ps(-1)});
  }
  for (const Node& node : nodes) {
    if (node.done) {
      result
          .timings[static_cast<std::size_t>(node.device)][static_cast<std::size_t>(node.position)] =
          OpTiming{node.start_time, node.end_time};
    }
  }
  result.out_of_memory = oom;
  if (completed < nodes.size()) {
    result.status = RunStatus::Deadlock;
    result.failure = describe_deadlock();
  } else if (!oom.empty()) {
    result.status = RunStatus::OutOfMemory;
    const OutOfMemory& o = oom.front();
    if (o.host.empty()) {
      result.failure =
          fmt::format("out of memory on device {} at {} during {}: {} over the budget of {}",
                      o.device, o.time, o.op, o.over, o.budget);
    } else {
      result.failure = fmt::format(
          "out of host memory on '{}' at {} during {} of device {}: {} over the host "
          "capacity of {}",
          o.host, o.time, o.op, o.device, o.over, o.budget);
    }
  }
  MemoryPeaks peaks;
  peaks.activation = activation_peak;
  peaks.activation_time = activation_peak_time;
  peaks.total = total_peak;
  peaks.activation_count = count_peak;
  result.metrics = compute_metrics(table, in.stage_costs, result.timings, peaks, exposed_comm);
  Metrics& m = result.metrics;
  m.peak_memory_time_per_device = total_peak_time;
  m.offloaded_bytes_per_device = offloaded;
  for (Bytes b : offloaded) m.offloaded_bytes += b;
  m.exposed_offload_per_device = exposed_offload;
  for (Time t : exposed_offload) m.exposed_offload += t;
  m.d2h_busy_per_device.assign(devices, Time::zero());
  m.h2d_busy_per_device.assign(devices, Time::zero());
  for (const Node& node : nodes) {
    if (!node.done || node.stream == 0) continue;
    auto& busy = node.stream == 1 ? m.d2h_busy_per_device : m.h2d_busy_per_device;
    busy[static_cast<std::size_t>(node.device)] += node.end_time - node.start_time;
  }
  if (sync) {
    sync->finish(result.metrics, completed == nodes.size());
    result.metrics.sync.link_classes = link_class_usage(*in.topology, *network);
  }
  if (network) {
    for (LinkId l = 0; l < in.topology->link_count(); ++l) {
      Time busy = network->link_busy_time(l);
      if (busy > Time::zero()) {
        result.metrics.links.push_back(
            LinkUsage{in.topology->link_name(l), busy,
                      Bytes(static_cast<std::int64_t>(network->link_bytes(l) + 0.5))});
      }
    }
  }
  return result;
}

}  // namespace bubblesim

namespace bubblesim {

Engine::Engine(EngineInput input) : state_(std::make_unique<State>(std::move(input))) {
  if (state_->in.table == nullptr) throw std::invalid_argument("the engine needs a table");
}
Engine::~Engine() = default;

void Engine::add_observer(EngineObserver* observer) { state_->observers.push_back(observer); }

SimulationResult Engine::run() { return state_->run(); }

SimulationResult simulate(EngineInput input) {
  Engine engine(std::move(input));
  return engine.run();
}

std::string_view run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return "ok";
    case RunStatus::Deadlock:
      return "deadlock";
    case RunStatus::OutOfMemory:
      return "out_of_memory";
  }
  return "?";
}

}  // namespace bubblesim
