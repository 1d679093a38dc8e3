// Blocking point-to-point (communication.p2p: blocking, docs/iterations.md): a compute op that
// sends to another device holds its compute stream until every one of its sends has arrived.
// The held time is exposed communication, and blocked_send on its own.

#include "sim/engine/components/builtin_components.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

class SendHold final : public EngineComponent {
 public:
  SendHold(const OpGraph& graph, bool moves_data)
      : graph_(graph),
        moves_data_(moves_data),
        holds_(graph.stream_slots()),
        blocked_(static_cast<std::size_t>(graph.devices()), Time::zero()) {}

  bool holds_stream(std::uint32_t n, Time now) override {
    if (!moves_data_) return false;  // no transfer: nothing to wait for
    std::int32_t sends = 0;
    for (const Edge& edge : graph_.edges(n)) sends += edge.kind != EdgeKind::Local ? 1 : 0;
    if (sends == 0) return false;
    holds_[OpGraph::slot(graph_.device(n), 0)] = Hold{sends, n, now, now};
    return true;
  }
  void on_send_arrived(std::uint32_t producer, Time at) override {
    if (graph_.stream(producer) != 0) return;
    const std::size_t slot = OpGraph::slot(graph_.device(producer), 0);
    Hold& h = holds_[slot];
    if (at > h.until) h.until = at;
    if (--h.sends > 0) return;
    const auto d = slot / OpGraph::kStreams;
    const Time held = h.until - h.since;
    blocked_[d] += held;
    host().times().exposed_comm[d] += held;
    const std::vector<EngineObserver*>& observers = host().observers();
    if (!observers.empty()) {
      const HoldEvent e{static_cast<std::int32_t>(d), graph_.position(h.op), graph_.op(h.op),
                        h.since, h.until};
      for (EngineObserver* o : observers) o->on_send_hold(e);
    }
    host().release(slot, h.until);
  }
  void report(Metrics& metrics, bool /*completed*/) override {
    metrics.comm.blocked_send_per_device = blocked_;
    metrics.comm.blocked_send = Time::zero();
    for (Time t : blocked_) metrics.comm.blocked_send = std::max(metrics.comm.blocked_send, t);
  }

 private:
  struct Hold {              // a compute stream held after op `op` by its sends
    std::int32_t sends = 0;  // sends still in flight
    std::uint32_t op = 0;    // the op whose sends hold it
    Time since, until;       // the op's end; the latest arrival so far
  };
  const OpGraph& graph_;
  const bool moves_data_;
  std::vector<Hold> holds_;    // per stream slot (compute slots only)
  std::vector<Time> blocked_;  // per device
};

}  // namespace

ComponentKind send_hold_component() {
  return ComponentKind{
      "send-hold",
      "blocking sends",
      [](const EngineInput& in) { return in.p2p.mode == P2pMode::Blocking; },
      // A held stream starts its next op at an arrival, not at its own end: the list replays
      // do not model that; a later iteration is still this one shifted.
      [](FastPath path) { return path == FastPath::ShiftedIterations; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<SendHold>(s.graph, s.network.moves_data());
      },
  };
}

}  // namespace bubblesim
