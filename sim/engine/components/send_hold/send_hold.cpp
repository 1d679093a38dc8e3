// Blocking point-to-point (communication.p2p: blocking, docs/iterations.md): a compute op that
// sends to another device holds its compute stream until every one of its sends has arrived.
// The held time is exposed communication, and `blocked_send_s` on its own (its BlockedSends
// record). The behaviour declares the key `communication.p2p` here, and the rows and report
// section it fills.

#include "sim/engine/components/send_hold/send_hold.h"

#include <algorithm>

#include "sim/engine/engine_component.h"
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
    metrics.components.put(BlockedSends{blocked_});
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

const ComponentSetting& p2p_setting() {
  static const ComponentSetting setting{
      choice_param(std::string(kP2pKey), "async", {"async", "blocking"},
                   "how a cross-device send occupies its sender: async, the sender's compute "
                   "stream goes on at once; blocking, it is held until the send arrives "
                   "(Megatron's batched send/receive waits for completion)"),
      /*reported_at_default=*/true};
  return setting;
}

}  // namespace

bool p2p_blocking(const ParamValues& settings) {
  return std::get<std::string>(setting_value(settings, p2p_setting().spec)) == "blocking";
}

ComponentKind send_hold_component() {
  ComponentKind kind{
      "send-hold",
      "blocking sends",
      [](const EngineInput& in) { return p2p_blocking(in.behaviours.settings); },
      // A held stream starts its next op at an arrival, not at its own end: the list replays
      // do not model that; a later iteration is still this one shifted.
      [](FastPath path) { return path == FastPath::ShiftedIterations; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<SendHold>(s.graph, s.network.moves_data());
      },
  };
  kind.settings.push_back(p2p_setting());
  kind.rows.push_back(ResultRow{
      "blocked_send_s", MetricUnit::Seconds, MetricDirection::LowerIsBetter, MetricShape::Scalar,
      "largest time a device's compute stream was held by its blocking sends (communication.p2p)",
      [](const Metrics& m) {
        const BlockedSends* b = blocked_sends(m);
        return largest_seconds(b != nullptr ? b->per_device : std::vector<Time>{});
      },
      "blocked send"});
  kind.rows_after = "samples_per_s";
  kind.section = kP2pSection;
  return kind;
}

}  // namespace bubblesim
