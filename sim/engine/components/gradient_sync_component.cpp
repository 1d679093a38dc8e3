// The gradient sync (gradient_sync.h) as an engine component: it watches compute ops start and
// end, runs its collectives as flows on its network port, and reports sync metrics.

#include <fmt/format.h>

#include "sim/engine/components/builtin_components.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

class GradientSyncComponent final : public EngineComponent {
 public:
  GradientSyncComponent(const ComponentSetup& s, FlowPort& port)
      : graph_(s.graph),
        sync_(*s.in.sync, *s.in.table, *s.in.topology_network()->topology, port, s.observers) {}

  std::uint8_t event_priority() const override { return kPriorityNetwork; }
  void on_event(std::uint32_t token, Time now) override { sync_.on_token(token, now); }
  void on_compute_start(std::uint32_t n, Time start, Time end) override {
    sync_.on_compute_start(graph_.device(n), graph_.position(n), start, end);
  }
  void on_compute_end(std::uint32_t n, Time now) override {
    sync_.on_compute_end(graph_.device(n), graph_.position(n), now);
  }
  std::string describe_stalled(double remaining_bytes) const override {
    return fmt::format("a gradient-sync flow with {:.0f} bytes left", remaining_bytes);
  }
  void report(Metrics& metrics, bool completed) override { sync_.finish(metrics, completed); }
  void iteration_ready(const Metrics& metrics, std::vector<Time>& ready) const override {
    ready = metrics.sync.sync_end_per_device;
  }
  bool reports_link_classes() const override { return true; }

 private:
  const OpGraph& graph_;
  GradientSync sync_;
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
