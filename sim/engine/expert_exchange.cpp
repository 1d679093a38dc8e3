#include "sim/engine/expert_exchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace bubblesim {

// Impl's own types are nested in it, not in the anonymous namespace: once the unity build
// includes this file, a class with linkage holding an anonymous-namespace type is a warning
// (GCC's -Wsubobject-linkage).
struct ExpertExchange::Impl {
  /// One phase of an op: `compute`, and `steps` all-to-alls of `stage` run after it (exposed) or
  /// beside it (overlapped, the compute slowed by `share` while they run).
  struct Phase {
    Time compute;
    std::int32_t stage = 0;
    std::int32_t steps = 0;
    bool overlapped = false;
    double share = 0;
  };

  /// Flows of one all-to-all that share their links: `flows` routes' worth over the links they
  /// have in common, carrying `shares` x (bytes / E).
  struct Leg {
    std::vector<LinkId> links;
    double shares = 0;
    Time latency;
    std::size_t flows = 1;
    bool outgoing = true;
  };

  /// An op whose all-to-all is in flight.
  struct Run {
    std::uint32_t node = 0;
    std::int32_t device = 0;
    std::array<Phase, 2> phases;
    std::int32_t phase_count = 0, phase = 0;
    Time phase_start, a2a_start;
    std::int32_t steps_left = 0;   // all-to-alls of the phase not started yet
    std::int32_t outstanding = 0;  // flows of the current all-to-all not arrived yet
    bool a2a_running = false;
    std::vector<LinkId> links;  // the links this run's flows used (for the trace)
    double sent = 0;            // bytes this phase's flows sent (for the trace)
  };

  const A2aPlan& plan;
  const OpGraph& graph;
  const Topology& topology;
  FlowPort& port;
  const std::vector<EngineObserver*>& observers;
  std::vector<std::vector<Leg>> legs;            // per device, on first use
  std::vector<std::vector<std::int32_t>> nodes;  // per device: node of each GPU of its group
  std::vector<Run> runs;
  std::vector<std::uint32_t> free;
  A2aReplayed replayed;

  Impl(const A2aPlan& p, const OpGraph& g, const Topology& t, FlowPort& fp,
       const std::vector<EngineObserver*>& obs)
      : plan(p), graph(g), topology(t), port(fp), observers(obs) {
    const auto devices = static_cast<std::size_t>(g.devices());
    nodes.resize(devices);
    for (std::size_t d = 0; d < devices && d < plan.groups.size(); ++d)
      nodes[d] = node_of_gpus(topology, plan.groups[d]);
    replayed.total.assign(devices, Time::zero());
    replayed.exposed.assign(devices, Time::zero());
    replayed.slowdown.assign(devices, Time::zero());
  }

  const A2aPlan::Stage* stage(std::int32_t s) const {
    const auto i = static_cast<std::size_t>(s);
    return s >= 0 && i < plan.stages.size() ? &plan.stages[i] : nullptr;
  }
  std::int32_t steps(std::int32_t s, bool forward) const {
    const A2aPlan::Stage* st = stage(s);
    return st == nullptr || st->bytes <= 0 ? 0 : forward ? st->forward : st->backward;
  }

  /// The phases of op n lasting `duration`; false when it has no all-to-all to run.
  bool phases_of(std::uint32_t n, Time duration, Run& run) const {
    const Op& op = graph.op(n);
    const auto d = static_cast<std::size_t>(graph.device(n));
    if (d >= plan.groups.size() || plan.groups[d].size() <= 1) return false;
    const StageCost& c = graph.cost(op.stage);
    auto rest = [&](Time part) { return duration > part ? duration - part : Time::zero(); };
    switch (op.kind) {
      case OpKind::Forward:
      case OpKind::Backward: {
        const bool f = op.kind == OpKind::Forward;
        const Time a2a = f ? c.moe.a2a_forward : c.moe.a2a_backward;
        const Time exposed = f ? c.moe.a2a_forward_exposed : c.moe.a2a_backward_exposed;
        const std::int32_t k = steps(op.stage, f);
        if (k <= 0 || a2a <= Time::zero() || exposed != a2a) return false;
        run.phases[0] = Phase{rest(exposed), op.stage, k, false, 0};
        run.phase_count = 1;
        return true;
      }
      case OpKind::ForwardBackward: {
        if (c.fused > Time::zero()) return false;  // the scenario gave the fused op's time
        const StageCost& b = graph.cost(op.backward_stage);
        const Time back =
            graph.has(n, OpGraph::kBackwardSplit) ? b.backward_input : b.full_backward();
        const std::int32_t kf = c.moe.a2a_forward > Time::zero() ? steps(op.stage, true) : 0;
        const std::int32_t kb =
            b.moe.a2a_backward > Time::zero() ? steps(op.backward_stage, false) : 0;
        if (kf <= 0 && kb <= 0) return false;
        const Time compute_f =
            c.forward - c.moe.a2a_forward_exposed - c.moe.a2a_sm.forward_slowdown;
        const Time compute_b = back - b.moe.a2a_backward_exposed - b.moe.a2a_sm.backward_slowdown;
        // What the duration holds beyond the formula (a straggler's slowdown) goes to the
        // second phase's compute.
        const Time extra = rest(fused_forward_backward(c, b, back));
        run.phases[0] = Phase{compute_b, op.stage, kf, true, c.moe.a2a_sm.share};
        run.phases[1] = Phase{compute_f + extra, op.backward_stage, kb, true, b.moe.a2a_sm.share};
        run.phase_count = 2;
        return true;
      }
      default:
        return false;
    }
  }

  std::uint32_t id_of(const Run& run) const { return static_cast<std::uint32_t>(&run - &runs[0]); }

  void begin_phase(Run& run, Time now) {
    const Phase& p = run.phases[static_cast<std::size_t>(run.phase)];
    run.phase_start = now;
    run.steps_left = p.steps;
    if (p.overlapped && p.steps > 0) {
      run.a2a_start = now;
      next_step(run, now);
    } else {
      port.add_timer(now + p.compute, id_of(run) | kTimerBit);
    }
  }

  /// Device d's all-to-all as few flows: its sends to the GPUs of its own node, its sends to
  /// other nodes, and the receives from each, every class one flow over the links all its routes
  /// share (the device's side: its NVLink port, its PCIe path and NIC), weighted by its number
  /// of routes so that it gets the bandwidth of that many flows. A class whose routes share no
  /// link stays one flow per route.
  const std::vector<Leg>& legs_of(std::size_t d) {
    if (legs.size() <= d) legs.resize(d + 1);
    std::vector<Leg>& out = legs[d];
    if (!out.empty()) return out;
    const std::vector<VertexId>& group = plan.groups[d];
    const std::vector<std::int32_t>& node = nodes[d];
    const double factor = d < plan.cross_node_factor.size() ? plan.cross_node_factor[d] : 1.0;
    for (const bool cross : {false, true}) {
      for (const bool outgoing : {true, false}) {
        std::vector<Route> routes;
        for (std::size_t j = 1; j < group.size(); ++j) {
          if ((node[j] != node[0]) != cross) continue;
          std::optional<Route> r =
              outgoing ? topology.route(group[0], group[j]) : topology.route(group[j], group[0]);
          routes.push_back(r ? std::move(*r) : Route{});
        }
        if (routes.empty()) continue;
        const double scale = cross ? factor : 1.0;
        std::vector<LinkId> common = routes.front().links;
        Time latency;
        for (const Route& r : routes) {
          latency = std::max(latency, r.latency);
          std::erase_if(common, [&](LinkId l) {
            return std::find(r.links.begin(), r.links.end(), l) == r.links.end();
          });
        }
        if (!common.empty()) {
          out.push_back(Leg{common, scale * static_cast<double>(routes.size()), latency,
                            routes.size(), outgoing});
          continue;
        }
        for (const Route& r : routes) out.push_back(Leg{r.links, scale, r.latency, 1, outgoing});
      }
    }
    return out;
  }

  /// Starts the run's next all-to-all.
  void next_step(Run& run, Time now) {
    --run.steps_left;
    run.a2a_running = true;
    const auto d = static_cast<std::size_t>(run.device);
    const A2aPlan::Stage& st = *stage(run.phases[static_cast<std::size_t>(run.phase)].stage);
    const double share = st.bytes / static_cast<double>(plan.groups[d].size());
    const std::uint32_t token = id_of(run);
    run.outstanding = 0;
    for (const Leg& leg : legs_of(d)) {
      ++run.outstanding;
      const double bytes = share * leg.shares;
      if (leg.links.empty() || !(bytes > 0)) {
        port.add_timer(now + leg.latency, token);  // arrives after the latency alone
        continue;
      }
      port.add_flow(leg.links, bytes, leg.latency, token, now, static_cast<double>(leg.flows));
      if (leg.outgoing) run.sent += bytes;
      if (!observers.empty()) run.links.insert(run.links.end(), leg.links.begin(), leg.links.end());
    }
    if (run.outstanding == 0) {
      run.outstanding = 1;
      port.add_timer(now, token);
    }
  }

  /// The run's all-to-alls of this phase have arrived at `now`.
  void a2a_done(Run& run, Time now) {
    run.a2a_running = false;
    const Phase& p = run.phases[static_cast<std::size_t>(run.phase)];
    const auto d = static_cast<std::size_t>(run.device);
    const Time a2a = now - run.a2a_start;
    replayed.total[d] += a2a;
    report(run, now);
    if (!p.overlapped) {
      replayed.exposed[d] += a2a;
      end_phase(run, now);
      return;
    }
    const A2aOverlap o = overlap_a2a(a2a, p.compute, p.share);
    replayed.exposed[d] += o.exposed;
    replayed.slowdown[d] += o.slowdown;
    const Time end = std::max(now, run.phase_start + p.compute + o.slowdown + o.exposed);
    if (end > now) {
      port.add_timer(end, id_of(run) | kTimerBit);
    } else {
      end_phase(run, now);
    }
  }

  /// The current phase ended at `now`: the next one starts, or the op ends.
  bool end_phase(Run& run, Time now) {
    if (++run.phase < run.phase_count) {
      begin_phase(run, now);
      return false;
    }
    ended = static_cast<std::int64_t>(run.node);
    free.push_back(id_of(run));
    return true;
  }

  void report(Run& run, Time now) {
    if (observers.empty()) return;
    std::sort(run.links.begin(), run.links.end());
    run.links.erase(std::unique(run.links.begin(), run.links.end()), run.links.end());
    const Op& op = graph.op(run.node);
    const Phase& p = run.phases[static_cast<std::size_t>(run.phase)];
    CollectiveEvent e;
    const bool fused = op.kind == OpKind::ForwardBackward;
    e.name =
        !p.overlapped ? fmt::format("expert all-to-all {} (exposed)", to_string(op))
        : fused ? fmt::format("expert all-to-all {} ({} half's, beside the {} half's compute)",
                              to_string(op), run.phase == 0 ? "F" : "B", run.phase == 0 ? "B" : "F")
                : fmt::format("expert all-to-all {} (beside its compute)", to_string(op));
    e.bytes = Bytes(static_cast<std::int64_t>(run.sent + 0.5));
    e.device = run.device;
    e.start = run.a2a_start;
    e.end = now;
    e.links = run.links;
    e.link_start.assign(run.links.size(), run.a2a_start);
    e.link_end.assign(run.links.size(), now);
    for (EngineObserver* o : observers) o->on_collective(e);
    run.links.clear();
    run.sent = 0;
  }

  std::int64_t ended = -1;

  void on_token(std::uint32_t token, Time now) {
    Run& run = runs[token & ~kTimerBit];
    if ((token & kTimerBit) != 0) {
      const Phase& p = run.phases[static_cast<std::size_t>(run.phase)];
      if (!p.overlapped && p.steps > 0 && !run.a2a_running && run.steps_left == p.steps) {
        run.a2a_start = now;  // the compute ended: the all-to-alls start
        next_step(run, now);
      } else {
        end_phase(run, now);
      }
      return;
    }
    if (--run.outstanding > 0) return;
    if (run.steps_left > 0) {
      next_step(run, now);
    } else {
      a2a_done(run, now);
    }
  }
};

ExpertExchange::ExpertExchange(const A2aPlan& plan, const OpGraph& graph, const Topology& topology,
                               FlowPort& port, const std::vector<EngineObserver*>& observers)
    : impl_(std::make_unique<Impl>(plan, graph, topology, port, observers)) {}

ExpertExchange::~ExpertExchange() = default;

std::optional<Time> ExpertExchange::start(std::uint32_t n, Time now, Time duration) {
  Impl& m = *impl_;
  Impl::Run run;
  if (!m.phases_of(n, duration, run)) return std::nullopt;
  run.node = n;
  run.device = m.graph.device(n);
  std::uint32_t id;
  if (m.free.empty()) {
    id = static_cast<std::uint32_t>(m.runs.size());
    m.runs.push_back(std::move(run));
  } else {
    id = m.free.back();
    m.free.pop_back();
    m.runs[id] = std::move(run);
  }
  m.begin_phase(m.runs[id], now);
  const Impl::Run& r = m.runs[id];
  return r.phase_count == 1 ? now + r.phases[0].compute : now + duration;
}

std::int64_t ExpertExchange::on_token(std::uint32_t token, Time now) {
  impl_->ended = -1;
  impl_->on_token(token, now);
  return impl_->ended;
}

const A2aReplayed& ExpertExchange::replayed() const { return impl_->replayed; }

}  // namespace bubblesim
