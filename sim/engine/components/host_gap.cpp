// The host gap after a blocking p2p call (communication.p2p_sync_gap, docs/iterations.md):
// Megatron's batched send/receive sends the previous op's output and receives this op's input in
// one call, which with batch_p2p_sync ends in a device synchronisation; the compute stream then
// idles for the gap while the host issues the next op. The gap is idle time, not communication.

#include <algorithm>

#include "sim/engine/components/builtin_components.h"
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
    metrics.comm.host_gap_per_device = host_gap_;
    metrics.comm.host_gap = Time::zero();
    for (Time t : host_gap_) metrics.comm.host_gap = std::max(metrics.comm.host_gap, t);
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

}  // namespace

ComponentKind host_gap_component() {
  return ComponentKind{
      "host-gap",
      "host gaps after blocking sends",
      [](const EngineInput& in) {
        return in.p2p.mode == P2pMode::Blocking && in.p2p.sync_gap > Time::zero();
      },
      [](FastPath path) { return path == FastPath::ShiftedIterations; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<HostGap>(s.graph, s.in.p2p.sync_gap);
      },
  };
}

}  // namespace bubblesim
