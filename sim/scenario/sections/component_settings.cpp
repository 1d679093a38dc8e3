#include "sim/scenario/sections/component_settings.h"

#include <map>

#include "sim/engine/component_kind.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/param_reader.h"

namespace bubblesim {
namespace {

/// The key without its section ("p2p" of "communication.p2p"), or "" when it is in another one.
std::string_view key_in(std::string_view section, std::string_view key) {
  if (key.size() <= section.size() + 1 || key.substr(0, section.size()) != section ||
      key[section.size()] != '.')
    return {};
  return key.substr(section.size() + 1);
}

}  // namespace

std::vector<std::string> component_keys(std::string_view section) {
  std::vector<std::string> out;
  for (const ComponentKind& kind : builtin_components()) {
    for (const ComponentSetting& s : kind.settings) {
      const std::string_view leaf = key_in(section, s.spec.name);
      if (!leaf.empty()) out.emplace_back(leaf);
    }
  }
  return out;
}

void read_component_settings(std::string_view section, MapReader& reader, DiagnosticList& diags,
                             Scenario& sc) {
  std::map<std::string, YamlNode> given;   // full key -> its node, for the checks' messages
  std::vector<const ComponentKind*> here;  // the behaviours with a key in this section
  bool unread = false;                     // a given key was refused
  for (const ComponentKind& kind : builtin_components()) {
    for (const ComponentSetting& s : kind.settings) {
      const std::string_view leaf = key_in(section, s.spec.name);
      if (leaf.empty()) continue;
      if (here.empty() || here.back() != &kind) here.push_back(&kind);
      const std::optional<YamlNode> node = reader.get(std::string(leaf));
      if (!node) continue;
      given.emplace(s.spec.name, *node);
      if (std::optional<ParamValue> v = read_param(*node, s.spec, diags))
        sc.communication.behaviours.set(s.spec.name, *v);
      else
        unread = true;
    }
  }
  // A key refused above reads as its default in the checks: they would only repeat that error.
  if (unread) return;
  for (const ComponentKind* kind : here) {
    if (kind->check == nullptr) continue;
    const std::optional<SettingProblem> problem = kind->check(sc.communication.behaviours);
    if (!problem) continue;
    const auto at = given.find(problem->key);
    if (at != given.end())
      at->second.error(diags, problem->message);
    else
      reader.node().error(diags, problem->key + ": " + problem->message);
  }
}

}  // namespace bubblesim
