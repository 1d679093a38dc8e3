#include "sim/sweep/sweep_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

// The location of a parsed node, when it has one.
std::optional<SourceLocation> location_of(const YAML::Node& node, const std::string& file) {
  if (!node.IsDefined() || node.Mark().is_null() || node.Mark().line < 0) return std::nullopt;
  return SourceLocation{file, node.Mark().line + 1, node.Mark().column + 1};
}

// Whether `key_path` ("pipeline.stages", "schedules[0].params.x") is `axis` or below it.
bool under(const std::string& key_path, const std::string& axis) {
  if (key_path.rfind(axis, 0) != 0) return false;
  return key_path.size() == axis.size() || key_path[axis.size()] == '.' ||
         key_path[axis.size()] == '[';
}

}  // namespace

// Read-only access throughout: a non-const operator[] could add keys to the shared tree.
YAML::Node node_at_key_path(const YAML::Node& base, const std::string& key_path) {
  YAML::Node node = base;
  std::size_t i = 0;
  while (i < key_path.size()) {
    const YAML::Node& current = node;
    YAML::Node next;
    std::size_t end = 0;
    if (key_path[i] == '[') {
      end = key_path.find(']', i);
      if (end == std::string::npos) break;
      std::size_t index = 0;
      const auto parsed = std::from_chars(key_path.data() + i + 1, key_path.data() + end, index);
      if (parsed.ec != std::errc() || !current.IsSequence() || index >= current.size()) {
        break;
      }
      next = current[index];
      ++end;
    } else {
      end = std::min(key_path.find_first_of(".[", i), key_path.size());
      if (!current.IsMap() || !current[key_path.substr(i, end - i)]) break;
      next = current[key_path.substr(i, end - i)];
    }
    node.reset(next);
    i = end < key_path.size() && key_path[end] == '.' ? end + 1 : end;
  }
  return node;
}

Diagnostic located_in_tree(Diagnostic d, const YAML::Node& root, const std::string& file) {
  // At the key itself where the path ends at a key of a mapping (as the loader points at an
  // unknown key), else at the deepest node of the path that exists.
  const std::size_t dot = d.key_path.find_last_of('.');
  const std::string last = d.key_path.substr(dot == std::string::npos ? 0 : dot + 1);
  const YAML::Node parent =
      dot == std::string::npos ? root : node_at_key_path(root, d.key_path.substr(0, dot));
  if (parent.IsMap() && last.find('[') == std::string::npos) {
    for (const auto& kv : parent) {
      if (kv.first.IsScalar() && kv.first.Scalar() == last) {
        if (auto at = location_of(kv.first, file)) d.where = *at;
        return d;
      }
    }
  }
  if (auto at = location_of(node_at_key_path(root, d.key_path), file)) d.where = *at;
  return d;
}

namespace {

// Where the axis `path` is given in the sweep file: a range's values are generated and have no
// position of their own, so the file is read again (only on this error path).
SourceLocation range_location(const SweepSpec& spec, const std::string& path) {
  DiagnosticList ignored;
  YamlDocument doc = YamlDocument::load_file(spec.file, ignored);
  if (doc.ok() && doc.root().raw().IsMap()) {
    const YAML::Node axes = doc.root().raw()["axes"];
    if (axes && axes.IsMap() && axes[path]) {
      if (auto at = location_of(axes[path], spec.file)) return *at;
    }
  }
  return SourceLocation{spec.file, 0, 0};
}

Diagnostic relocate(const SweepSpec& spec, const std::vector<std::size_t>& coordinates,
                    Diagnostic d) {
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const SweepAxis& axis = spec.axes[a];
    if (!under(d.key_path, axis.path)) continue;
    d.where = location_of(axis.values[coordinates[a]], spec.file)
                  .value_or(range_location(spec, axis.path));
    d.message += fmt::format(" (axis '{}', value {})", axis.path, axis.labels[coordinates[a]]);
    return d;
  }
  if (d.where.file == spec.base_file && d.where.line > 0) {
    d.where = location_of(node_at_key_path(spec.base, d.key_path), spec.base_file)
                  .value_or(SourceLocation{spec.base_file, 0, 0});
  }
  return d;
}

}  // namespace

InputError locate_point_error(const SweepSpec& spec, std::int64_t point, const InputError& error) {
  const std::vector<std::size_t> coordinates = spec.coordinates(point);
  std::vector<Diagnostic> located;
  for (const Diagnostic& d : error.diagnostics()) located.push_back(relocate(spec, coordinates, d));
  return InputError(std::move(located));
}

}  // namespace bubblesim
