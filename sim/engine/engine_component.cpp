#include "sim/engine/engine_component.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bubblesim {

std::string EngineComponent::describe_stalled(double remaining_bytes) const {
  return fmt::format("a flow with {:.0f} bytes left", remaining_bytes);
}

std::string_view refusing_behaviour(FastPath path, const EngineInput& in,
                                    std::span<const ComponentKind> kinds) {
  for (const ComponentKind& kind : kinds) {
    if (kind.engaged(in) && !kind.permits(path)) return kind.description;
  }
  return {};
}

std::vector<std::unique_ptr<EngineComponent>> make_components(
    const EngineInput& in, const OpGraph& graph, NetworkModel& network,
    const std::vector<EngineObserver*>& observers, std::span<const ComponentKind> kinds) {
  std::vector<std::unique_ptr<EngineComponent>> out;
  for (const ComponentKind& kind : kinds) {
    if (!kind.engaged(in)) continue;
    if (out.size() > 255) throw std::logic_error("more than 256 engine components");
    const ComponentSetup setup{in, graph, network, observers,
                               static_cast<std::uint8_t>(out.size())};
    if (std::unique_ptr<EngineComponent> c = kind.make(setup)) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace bubblesim
