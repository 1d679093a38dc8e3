// No key without an effect: every key a scenario file accepts is listed in
// key_effects.yaml with a change that must show in the report's results, or that must be refused
// with an input error saying why. The keys a file accepts are discovered, not listed by hand: an
// unknown key put into each probed mapping makes the loader list the allowed ones, and every one
// of them must have a case. A new key therefore fails this test until it has a case.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/builtin_generators.h"
#include "sim/report/json_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

const YAML::Node& spec() {
  static const YAML::Node s =
      YAML::LoadFile(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/scenario/key_effects.yaml");
  return s;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) out.push_back(part);
  return out;
}

/// Sets `path` (dotted) in `root` to `value`, creating mappings on the way.
void set_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  const std::vector<std::string> parts = split_path(path);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node[parts[i]] || !node[parts[i]].IsMap())
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[parts[i]]);
  }
  node[parts.back()] = YAML::Clone(value);
}

std::string base_text(const std::string& name) {
  REQUIRE_MESSAGE(spec()["bases"][name], "no base '" << name << "' in key_effects.yaml");
  return spec()["bases"][name].as<std::string>();
}

std::string emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

/// The report of a scenario without what describes the run rather than the schedule (wall
/// times): `labels_too` keeps the whole report, else only the results and the skipped schedules.
nlohmann::json report_of(const std::string& yaml, bool labels_too) {
  const Scenario sc = load_scenario_string(yaml, "keys.yaml", BUBBLESIM_SOURCE_DIR, builtins());
  const ScenarioRun run = run_scenario(sc, builtins());
  nlohmann::json report = scenario_report_json(sc, run);
  report.erase("run");
  for (auto& r : report["results"]) r.erase("run");
  if (labels_too) return report;
  return nlohmann::json{{"results", report["results"]}, {"skipped", report["skipped"]}};
}

void apply(YAML::Node root, const YAML::Node& settings) {
  for (const auto& kv : settings) set_path(root, kv.first.as<std::string>(), kv.second);
}

void remove_path(YAML::Node root, const std::string& path) {
  const std::vector<std::string> parts = split_path(path);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) node.reset(node[parts[i]]);
  node.remove(parts.back());
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The keys the loader allows in the mapping at `path` of `base` ("" = top level), read from
/// the "(allowed: ...)" list of the error an unknown key provokes.
std::vector<std::string> allowed_keys(const std::string& base, const std::string& path) {
  YAML::Node root = YAML::Load(base_text(base));
  const std::string probe = "zzz_not_a_key";
  set_path(root, path.empty() ? probe : path + "." + probe, YAML::Node(1));
  try {
    (void)load_scenario_string(emit(root), "keys.yaml", BUBBLESIM_SOURCE_DIR, builtins());
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) {
      const std::string text = d.render();
      if (text.find(probe) == std::string::npos) continue;
      const auto at = text.find("(allowed: ");
      REQUIRE(at != std::string::npos);
      const auto end = text.find(')', at);
      std::vector<std::string> keys;
      std::stringstream ss(text.substr(at + 10, end - at - 10));
      std::string key;
      while (std::getline(ss, key, ',')) {
        key.erase(0, key.find_first_not_of(' '));
        keys.push_back(key);
      }
      return keys;
    }
  }
  FAIL("probing '" << path << "' of base '" << base << "' raised no unknown-key error");
  return {};
}

/// The report of `variant`, or none when it is refused with an input error, which must name the
/// last part of `key`.
std::optional<nlohmann::json> report_or_refusal(const YAML::Node& variant, const std::string& key) {
  try {
    return report_of(emit(variant), false);
  } catch (const InputError& e) {
    const std::string last = lower(split_path(key).back());
    bool named = false;
    for (const Diagnostic& d : e.diagnostics())
      named = named || lower(d.render()).find(last) != std::string::npos;
    CHECK_MESSAGE(named, "the error does not name '" << last << "': " << e.what());
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("every key a scenario accepts has a case in key_effects.yaml") {
  std::set<std::string> covered;
  for (const auto& c : spec()["cases"]) covered.insert(c["key"].as<std::string>());
  for (const auto& probe : spec()["probes"]) {
    const std::string base = probe["base"].as<std::string>();
    const std::string path = probe["path"] ? probe["path"].as<std::string>() : "";
    for (const std::string& key : allowed_keys(base, path)) {
      const std::string full = path.empty() ? key : path + "." + key;
      CHECK_MESSAGE(
          covered.count(full) == 1,
          "the scenario key '" << full << "' has no case in tests/scenario/key_effects.yaml");
    }
  }
}

TEST_CASE("changing any key changes the report, or the change is refused with a reason") {
  for (const auto& c : spec()["cases"]) {
    const std::string key = c["key"].as<std::string>();
    const std::string expect = c["expect"] ? c["expect"].as<std::string>() : "changes";
    CAPTURE(key);
    REQUIRE((expect == "changes" || expect == "labels" || expect == "refused"));
    YAML::Node base = YAML::Load(base_text(c["base"].as<std::string>()));
    apply(base, c["with"]);
    YAML::Node variant = YAML::Clone(base);
    apply(variant, c["set"]);
    for (const auto& path : c["remove"]) remove_path(variant, path.as<std::string>());
    const nlohmann::json before = report_of(emit(base), expect == "labels");
    if (expect == "refused") {
      // An input error that names the key, from loading or from running.
      CHECK_MESSAGE(!report_or_refusal(variant, key),
                    "setting " << key << " was neither refused nor acted on");
      continue;
    }
    const nlohmann::json after = report_of(emit(variant), expect == "labels");
    CHECK_MESSAGE(after != before, "setting " << key << " did not change the report");
  }
}

TEST_CASE("beside each costs form, every key of a model still changes the report or is refused") {
  // The cases whose base has a model, again with the layer times given (cost_forms): a key that
  // times layers from the model (fp8_linear, host_launch, the first-principles mechanisms) must
  // then be refused, or act on what the model still derives (memory, collectives, the LM head).
  int compared = 0;
  for (const auto& form : spec()["cost_forms"]) {
    const std::string form_name = form.first.as<std::string>();
    for (const auto& c : spec()["cases"]) {
      const std::string key = c["key"].as<std::string>();
      const std::string expect = c["expect"] ? c["expect"].as<std::string>() : "changes";
      YAML::Node base = YAML::Load(base_text(c["base"].as<std::string>()));
      if (!base["model"] || expect == "labels" || key.rfind("costs", 0) == 0) continue;
      CAPTURE(form_name);
      CAPTURE(key);
      apply(base, c["with"]);
      apply(base, c["with_forms"]);
      apply(base, form.second["set"]);
      for (const auto& path : form.second["remove"]) remove_path(base, path.as<std::string>());
      YAML::Node variant = YAML::Clone(base);
      apply(variant, c["set"]);
      for (const auto& path : c["remove"]) remove_path(variant, path.as<std::string>());
      nlohmann::json before;
      try {
        before = report_of(emit(base), false);
      } catch (const InputError&) {
        continue;  // the form itself is refused beside this base: nothing to compare
      }
      const std::optional<nlohmann::json> after = report_or_refusal(variant, key);
      ++compared;
      if (after)
        CHECK_MESSAGE(*after != before, "setting " << key << " beside " << form_name
                                                   << " was accepted and changed nothing");
    }
  }
  CHECK(compared >= 100);
}
