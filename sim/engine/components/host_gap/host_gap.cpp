// The host gap after a blocking p2p call (communication.p2p_sync_gap, docs/iterations.md):
// Megatron's batched send/receive sends the previous op's output and receives this op's input in
// one call, which with batch_p2p_sync ends in a device synchronisation; the compute stream then
// idles for the gap while the host issues the next op. The gap is idle time, not communication:
// `host_gap_s` (its HostGaps record), and point-to-point idle in the idle split. The behaviour
// declares the key `communication.p2p_sync_gap` here (it needs blocking sends' `p2p: blocking`),
// and the rows and report section it fills.

#include "sim/engine/components/host_gap/host_gap.h"

#include <algorithm>

#include "sim/engine/components/send_hold/send_hold.h"
#include "sim/engine/engine_component.h"
#include "sim/engine/event_loop.h"

namespace bubblesim {
namespace {

class HostGap final : public EngineComponent {
 public:
  HostGap(const OpGraph& graph, Time gap)
      : graph_(graph),
        gap_(gap),
        sent_last_(graph.stream_slots(), false),
        pending_(graph.stream_slots(), false),
        host_gap_(static_cast<std::size_t>(graph.devices()), Time::zero()) {}

  void on_event(std::uint32_t slot, Time now) override {
    pending_[slot] = false;
    host().try_start(slot, now);
  }
  bool admits(std::size_t slot, std::uint32_t n, Time now) override {
    const std::optional<Time> call_end = p2p_call_end(slot, n);
    if (!call_end) return true;
    const Time due = *call_end + gap_;
    if (now >= due) return true;
    if (!pending_[slot]) {
      pending_[slot] = true;
      host().schedule(id(), due, static_cast<std::uint32_t>(slot));
    }
    return false;
  }
  Time idle_before(std::size_t slot, std::uint32_t n, Time now) override {
    const std::optional<Time> call_end = p2p_call_end(slot, n);
    if (!call_end) return Time::zero();
    const Time gap = std::min(gap_, now - std::min(now, *call_end));
    const std::int32_t device = graph_.device(n);
    host_gap_[static_cast<std::size_t>(device)] += gap;
    if (gap > Time::zero() && !host().observers().empty()) {
      const HoldEvent e{device, graph_.position(n), graph_.op(n), now - gap, now, true};
      for (EngineObserver* o : host().observers()) o->on_send_hold(e);
    }
    return gap;
  }
  bool holds_stream(std::uint32_t n, Time /*now*/) override {
    bool sends = false;
    for (const Edge& edge : graph_.edges(n)) sends = sends || edge.kind != EdgeKind::Local;
    sent_last_[OpGraph::slot(graph_.device(n), 0)] = sends;
    return false;
  }
  void report(Metrics& metrics, bool /*completed*/) override {
    metrics.components.put(HostGaps{host_gap_});
  }

 private:
  /// The end of the p2p call before compute op n (its receives and the previous op's sends), or
  /// nullopt when none precedes it.
  std::optional<Time> p2p_call_end(std::size_t slot, std::uint32_t n) const {
    const std::optional<Time> received = host().remote_ready(n);
    if (!sent_last_[slot] && !received) return std::nullopt;
    return std::max(host().stream_free_at(slot), received.value_or(Time::zero()));
  }

  const OpGraph& graph_;
  const Time gap_;
  std::vector<bool> sent_last_;  // per slot: its previous op sent to another device
  std::vector<bool> pending_;    // per slot: an event is queued for the gap's end
  std::vector<Time> host_gap_;   // per device
};

const ComponentSetting& gap_setting() {
  static const ComponentSetting setting{
      ParamSpec{"communication.p2p_sync_gap",
                ParamType::Duration,
                Time::zero(),
                "with p2p: blocking, the host gap after each send/receive before the next op "
                "starts (Megatron's batch_p2p_sync)",
                {},
                nullptr,
                false},
      /*reported_at_default=*/false};
  return setting;
}

Time gap_of(const ParamValues& settings) {
  return std::get<Time>(setting_value(settings, gap_setting().spec));
}

}  // namespace

ComponentKind host_gap_component() {
  ComponentKind kind{
      "host-gap",
      "host gaps after blocking sends",
      [](const EngineInput& in) {
        return p2p_blocking(in.behaviours.settings) &&
               gap_of(in.behaviours.settings) > Time::zero();
      },
      [](FastPath path) { return path == FastPath::ShiftedIterations; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<HostGap>(s.graph, gap_of(s.in.behaviours.settings));
      },
  };
  kind.settings.push_back(gap_setting());
  kind.check = [](const ParamValues& settings) -> std::optional<SettingProblem> {
    if (gap_of(settings) > Time::zero() && !p2p_blocking(settings)) {
      return SettingProblem{
          gap_setting().spec.name,
          "the host gap after each blocking send/receive (Megatron's batch_p2p_sync): it needs "
          "'p2p: blocking' (allowed: a duration with p2p: blocking, or 0)"};
    }
    return std::nullopt;
  };
  kind.rows.push_back(ResultRow{
      "host_gap_s", MetricUnit::Seconds, MetricDirection::LowerIsBetter, MetricShape::Scalar,
      "largest time a device's compute stream idled in host gaps after blocking p2p calls "
      "(communication.p2p_sync_gap); absent without one",
      [](const Metrics& m) {
        const HostGaps* g = host_gaps(m);
        return g != nullptr ? largest_seconds(g->per_device) : MetricValue{};
      },
      "host gap"});
  kind.rows_after = "blocked_send_s";
  kind.section = kP2pSection;  // the blocking sends' section: one table for both
  kind.p2p_idle = [](const Metrics& m) {
    const HostGaps* g = host_gaps(m);
    return g != nullptr ? g->per_device : std::vector<Time>{};
  };
  return kind;
}

}  // namespace bubblesim
