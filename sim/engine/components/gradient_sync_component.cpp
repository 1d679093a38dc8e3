// The gradient sync (gradient_sync.h) as an engine component: it watches compute ops start and
// end, runs its collectives as flows on its network port, and reports sync metrics. With
// SyncPlan::overlap.sm_share it runs every compute op itself: while a device's bucket collectives
// hold SMs its op advances at GradientSync::compute_rate, so an op that shares time with a bucket
// ends later, by share / (1 - share) of the time they share (docs/parallelism.md).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/engine/components/builtin_components.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

class GradientSyncComponent final : public EngineComponent {
 public:
  GradientSyncComponent(const ComponentSetup& s, FlowPort& port)
      : graph_(s.graph),
        sync_(*s.in.sync, *s.in.table, *s.in.topology_network()->topology, port, s.observers),
        share_(s.in.sync->overlap.sm_share),
        running_(static_cast<std::size_t>(s.in.table->devices)),
        gather_scheduled_(static_cast<std::size_t>(s.in.table->devices), false),
        slowdown_(static_cast<std::size_t>(s.in.table->devices), Time::zero()) {}

  std::uint8_t event_priority() const override { return kPriorityNetwork; }
  void on_event(std::uint32_t token, Time now) override {
    if ((token & GradientSync::kReadyBit) == 0 && (token & kGatherBit) != 0) {
      host().try_start(token & ~kGatherBit, now);  // the slot's parameter all-gather is done
      return;
    }
    if ((token & GradientSync::kReadyBit) == 0 && (token & kComputeEndBit) != 0) {
      const Pending& e = pending_[token & ~kComputeEndBit];
      Running& r = running_[static_cast<std::size_t>(e.device)];
      if (r.active && r.generation == e.generation) {
        r.active = false;
        Time& slowed = slowdown_[static_cast<std::size_t>(e.device)];
        slowed += std::max(Time::zero(), now - r.start - r.duration);
        host().finish(r.op, now);
      }
      return;
    }
    sync_.on_token(token, now);
    for (std::int32_t d : sync_.take_rate_changes()) retime(d, now);
  }
  /// A device's first compute op waits for the parameter all-gather before it (ZeRO 1-2's
  /// updated parameters, FSDP2's under a pipeline; SyncPlan::parameter_gather).
  bool admits(std::size_t slot, std::uint32_t n, Time now) override {
    const std::int32_t d = graph_.device(n);
    if (graph_.position(n) != sync_.first_compute(d)) return true;
    const Time due = sync_.first_op_ready(d, now, host().stream_free_at(slot));
    if (due <= now) return true;
    if (!gather_scheduled_[static_cast<std::size_t>(d)]) {
      gather_scheduled_[static_cast<std::size_t>(d)] = true;
      host().schedule(id(), due, kGatherBit | static_cast<std::uint32_t>(slot));
    }
    return false;
  }
  std::optional<Time> run(std::uint32_t n, Time now, Time duration) override {
    if (!(share_ > 0)) return std::nullopt;
    const std::int32_t d = graph_.device(n);
    Running& r = running_[static_cast<std::size_t>(d)];
    r = Running{n,
                true,
                r.generation + 1,
                static_cast<double>(duration.ps()),
                now,
                sync_.compute_rate(d),
                now,
                duration};
    return schedule_end(d, now);
  }
  void on_compute_start(std::uint32_t n, Time start, Time end) override {
    sync_.on_compute_start(graph_.device(n), graph_.position(n), start, end);
  }
  void on_compute_end(std::uint32_t n, Time now) override {
    sync_.on_compute_end(graph_.device(n), graph_.position(n), now);
  }
  std::string describe_stalled(double remaining_bytes) const override {
    return fmt::format("a gradient-sync flow with {:.0f} bytes left", remaining_bytes);
  }
  void report(Metrics& metrics, bool completed) override {
    sync_.finish(metrics, completed);
    for (Time t : slowdown_) metrics.sync.sm_slowdown = std::max(metrics.sync.sm_slowdown, t);
  }
  void iteration_ready(const Metrics& metrics, std::vector<Time>& ready) const override {
    ready = metrics.sync.sync_end_per_device;
  }
  bool reports_link_classes() const override { return true; }

 private:
  /// Compute-end and gather-done events among the flow tokens and readiness timers (their ids
  /// stay below 2^29).
  static constexpr std::uint32_t kComputeEndBit = 0x40000000u;
  static constexpr std::uint32_t kGatherBit = 0x20000000u;
  /// The compute op a device runs now: its work left (ps at full speed) as of `since`.
  struct Running {
    std::uint32_t op = 0;
    bool active = false;
    std::uint32_t generation = 0;  // an end event of an older generation is stale
    double work_ps = 0;
    Time since;
    double rate = 1;
    Time start, duration;  // as the op started, at full speed
  };
  struct Pending {
    std::int32_t device = 0;
    std::uint32_t generation = 0;
  };

  Time schedule_end(std::int32_t d, Time now) {
    const Running& r = running_[static_cast<std::size_t>(d)];
    const Time end = now + Time::from_ps(static_cast<std::int64_t>(std::ceil(r.work_ps / r.rate)));
    pending_.push_back(Pending{d, r.generation});
    host().schedule(id(), end, kComputeEndBit | static_cast<std::uint32_t>(pending_.size() - 1));
    return end;
  }
  /// Device d's compute rate changed now: its running op's work so far at the old rate, the
  /// rest at the new one.
  void retime(std::int32_t d, Time now) {
    Running& r = running_[static_cast<std::size_t>(d)];
    const double rate = sync_.compute_rate(d);
    if (!r.active || rate == r.rate) return;
    r.work_ps = std::max(0.0, r.work_ps - static_cast<double>((now - r.since).ps()) * r.rate);
    r.since = now;
    r.rate = rate;
    ++r.generation;
    schedule_end(d, now);
  }

  const OpGraph& graph_;
  GradientSync sync_;
  double share_ = 0;
  std::vector<Running> running_;
  std::vector<bool> gather_scheduled_;  // per device: its first op's gather-done event is due
  std::vector<Pending> pending_;
  std::vector<Time> slowdown_;  // per device: its ops' time beyond their full-speed durations
};

}  // namespace

ComponentKind gradient_sync_component() {
  return ComponentKind{
      "gradient-sync",
      "a gradient sync",
      [](const EngineInput& in) { return in.sync != nullptr; },
      // Its collectives run on the links after the last op, into the next iteration's start.
      [](FastPath) { return false; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        FlowPort* port = s.network.flow_port(s.id);
        if (port == nullptr) return nullptr;  // no links: the plan has nothing to run on
        return std::make_unique<GradientSyncComponent>(s, *port);
      },
  };
}

}  // namespace bubblesim
