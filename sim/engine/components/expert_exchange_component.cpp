// The expert all-to-all as flows (expert_exchange.h) as an engine component: it runs each MoE
// compute op (the op ends when its compute and its flows are done) and reports what the
// all-to-alls took.

#include <fmt/format.h>

#include "sim/engine/components/builtin_components.h"
#include "sim/engine/expert_exchange.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

class ExpertExchangeComponent final : public EngineComponent {
 public:
  ExpertExchangeComponent(const ComponentSetup& s, const TopologyNetwork& topology, FlowPort& port)
      : exchange_(*topology.a2a, s.graph, *topology.topology, port, s.observers) {}

  void on_event(std::uint32_t token, Time now) override {
    if (const std::int64_t n = exchange_.on_token(token, now); n >= 0)
      host().finish(static_cast<std::uint32_t>(n), now);
  }
  std::optional<Time> run(std::uint32_t n, Time now, Time duration) override {
    return exchange_.start(n, now, duration);
  }
  std::string describe_stalled(double remaining_bytes) const override {
    return fmt::format("an expert all-to-all flow with {:.0f} bytes left", remaining_bytes);
  }
  void report(Metrics& metrics, bool /*completed*/) override {
    const A2aReplayed& a = exchange_.replayed();
    metrics.a2a = A2aMetrics{a.total, a.exposed, a.slowdown};
  }

 private:
  ExpertExchange exchange_;
};

}  // namespace

ComponentKind expert_exchange_component() {
  return ComponentKind{
      "expert-exchange",
      "an expert all-to-all as flows",
      [](const EngineInput& in) {
        const TopologyNetwork* t = in.topology_network();
        return t != nullptr && t->a2a != nullptr;
      },
      // Its flows contend with the transfers and run across the iteration's end.
      [](FastPath) { return false; },
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        FlowPort* port = s.network.flow_port(s.id);
        if (port == nullptr) return nullptr;
        return std::make_unique<ExpertExchangeComponent>(s, *s.in.topology_network(), *port);
      },
  };
}

}  // namespace bubblesim
