#include "sim/engine/engine_component.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bubblesim {

std::string EngineComponent::describe_stalled(double remaining_bytes) const {
  return fmt::format("a flow with {:.0f} bytes left", remaining_bytes);
}

std::string_view fast_path_name(FastPath path) {
  switch (path) {
    case FastPath::ListReplay:
      return "list-replay";
    case FastPath::StreamReplay:
      return "stream-replay";
    case FastPath::ShiftedIterations:
      return "shifted-iterations";
  }
  return "?";
}

std::span<const ComponentKind> components_of(const EngineInput& in) {
  return in.behaviours.kinds.empty() ? builtin_components() : in.behaviours.kinds;
}

const ComponentKind* refusing_component(FastPath path, const EngineInput& in) {
  for (const ComponentKind& kind : components_of(in)) {
    if (kind.engaged(in) && !kind.permits(path)) return &kind;
  }
  return nullptr;
}

std::string_view refusing_behaviour(FastPath path, const EngineInput& in) {
  const ComponentKind* kind = refusing_component(path, in);
  return kind != nullptr ? kind->description : std::string_view();
}

const ParamValue& setting_value(const ParamValues& settings, const ParamSpec& spec) {
  const auto& given = settings.all();
  const auto it = given.find(spec.name);
  return it != given.end() ? it->second : spec.default_value;
}

ComponentUse component_use(const EngineInput& in) {
  ComponentUse use;
  for (const ComponentKind& kind : components_of(in))
    if (kind.engaged(in)) use.engaged.emplace_back(kind.name);
  for (FastPath path : kFastPaths) {
    if (const ComponentKind* by = refusing_component(path, in))
      use.refused.push_back({std::string(fast_path_name(path)), std::string(by->name)});
  }
  return use;
}

std::vector<std::unique_ptr<EngineComponent>> make_components(
    const EngineInput& in, const OpGraph& graph, NetworkModel& network,
    const std::vector<EngineObserver*>& observers) {
  std::vector<std::unique_ptr<EngineComponent>> out;
  for (const ComponentKind& kind : components_of(in)) {
    if (!kind.engaged(in)) continue;
    if (out.size() > 255) throw std::logic_error("more than 256 engine components");
    const ComponentSetup setup{in, graph, network, observers,
                               static_cast<std::uint8_t>(out.size())};
    if (std::unique_ptr<EngineComponent> c = kind.make(setup)) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace bubblesim
