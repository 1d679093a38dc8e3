// bubblesim._core: editing a scenario's YAML by key path (Scenario.set / Scenario.with_ in
// python/bubblesim/_scenario.py). The edits are applied to the scenario's source tree, which is
// loaded and validated as the CLI loads a file; an error on an edited key names the edit, and
// an error elsewhere points at the key in the source (its file, line and column).
#include <fmt/format.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/src/core.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/sweep_errors.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim::python {
namespace {

using Edit = std::pair<std::string, std::string>;  // dotted key path, value as YAML text

YAML::Node parse(const std::string& text, const std::string& name) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, name, d);
  d.throw_if_any();
  if (!doc.root().is_map())
    throw InputError(fmt::format("{}: a scenario is a mapping of sections, got {}", name,
                                 doc.root().describe()));
  return doc.root().raw();
}

// Whether diagnostic key `key` is the edited path or below it.
bool under(const std::string& key, const std::string& path) {
  return key.rfind(path, 0) == 0 &&
         (key.size() == path.size() || key[path.size()] == '.' || key[path.size()] == '[');
}

// The source tree with the edits applied, as YAML text. An edit going inside a value that is not
// a mapping (pipeline.stages.x where stages is 4) would replace the value: refused.
std::string apply(const YAML::Node& source, const std::string& name,
                  const std::vector<Edit>& edits) {
  YAML::Node tree = YAML::Clone(source);
  for (const auto& [path, value] : edits) {
    const bool ok = !path.empty() && path.front() != '.' && path.back() != '.' &&
                    path.find("..") == std::string::npos;
    if (!ok) {
      throw InputError({Diagnostic{SourceLocation{name, 0, 0}, path,
                                   fmt::format("'{}' is not a dotted key path such as "
                                               "parallelism.dp",
                                               path)}});
    }
    // Walk the keys above the leaf (read-only: a non-const operator[] would add them).
    YAML::Node node = tree;
    std::size_t start = 0;
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      const std::string key = path.substr(start, dot - start);
      const YAML::Node& current = node;
      if (!current.IsMap() || !current[key]) break;  // absent: the edit creates it
      const YAML::Node next = current[key];
      if (!next.IsMap()) {
        throw InputError({Diagnostic{
            SourceLocation{name, 0, 0}, path,
            fmt::format("'{}' is {} in the scenario, not a mapping: an edit cannot set a key "
                        "inside it",
                        path.substr(0, dot),
                        next.IsScalar() ? "'" + next.Scalar() + "'" : "a list")}});
      }
      node.reset(next);
      start = dot + 1;
    }
    YAML::Node parsed;
    try {
      parsed = YAML::Load(value);
    } catch (const YAML::Exception& e) {
      throw InputError({Diagnostic{SourceLocation{name, 0, 0}, path,
                                   fmt::format("the value is not YAML: {}", e.what())}});
    }
    set_at_key_path(tree, path, parsed);
  }
  YAML::Emitter e;
  e << tree;
  return std::string(e.c_str()) + "\n";
}

// Loads the edited scenario; errors relocated as the file comment says.
std::pair<std::shared_ptr<Scenario>, std::string> load_edited(const std::string& text,
                                                              const std::string& name,
                                                              const std::string& base_dir,
                                                              const std::vector<Edit>& edits) {
  const YAML::Node source = parse(text, name);
  const std::string edited = apply(source, name, edits);
  try {
    return {std::make_shared<Scenario>(load_scenario_string(edited, name, base_dir, *registry())),
            edited};
  } catch (const InputError& e) {
    std::vector<Diagnostic> located;
    for (Diagnostic d : e.diagnostics()) {
      bool edited_key = false;
      for (auto it = edits.rbegin(); it != edits.rend() && !edited_key; ++it) {
        if (!under(d.key_path, it->first)) continue;
        edited_key = true;
        d.where = SourceLocation{name, 0, 0};
        d.message += fmt::format(" (set by an edit: {} = {})", it->first, it->second);
      }
      located.push_back(edited_key ? d : located_in_tree(d, source, name));
    }
    throw InputError(std::move(located));
  }
}

}  // namespace

void bind_edits(py::module_& m) {
  m.def(
      "_load_edited",
      [](const std::string& text, const std::string& name, const std::string& base_dir,
         const std::vector<Edit>& edits) {
        try {
          return load_edited(text, name, base_dir, edits);
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("text"), py::arg("name"), py::arg("base_dir"), py::arg("edits"));
  m.def(
      "_yaml_at",
      [](const std::string& text, const std::string& path) -> std::optional<std::string> {
        try {
          const YAML::Node root = parse(text, "<scenario>");
          YAML::Node node = root;
          std::size_t start = 0;
          while (true) {
            const std::size_t dot = path.find('.', start);
            const std::string key =
                path.substr(start, dot == std::string::npos ? dot : dot - start);
            const YAML::Node& current = node;
            if (!current.IsMap() || !current[key]) return std::nullopt;
            node.reset(current[key]);
            if (dot == std::string::npos) break;
            start = dot + 1;
          }
          YAML::Emitter e;
          e << YAML::Flow << node;
          return std::string(e.c_str());
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("text"), py::arg("path"));
}

}  // namespace bubblesim::python
