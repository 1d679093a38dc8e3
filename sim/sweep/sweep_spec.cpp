#include "sim/sweep/sweep_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <string_view>
#include <unordered_set>

#include "sim/sweep/sweep_shape.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

constexpr std::size_t kMaxValuesPerAxis = 100'000;

std::string scalar_label(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// Range {from, to, factor | step, unit}: numbers, inclusive of `to` when it is hit exactly.
void read_range(const YamlNode& node, SweepAxis& axis, DiagnosticList& d) {
  MapReader r(node, d, {"from", "to", "factor", "step", "unit"});
  auto from = r.real("from", -1e18, 1e18);
  auto to = r.real("to", -1e18, 1e18);
  auto factor = r.real("factor", 1.0 + 1e-9, 1e9);
  auto step = r.real("step", 1e-12, 1e18);
  auto unit = r.string("unit");
  if (!r.has("from")) r.require("from");
  if (!r.has("to")) r.require("to");
  if (factor && step)
    node.error(d, "give either 'factor' (geometric) or 'step' (arithmetic), not both");
  if (!factor && !step && r.has("from") && r.has("to") && !r.has("factor") && !r.has("step")) {
    node.error(d, "a range needs 'factor' (geometric) or 'step' (arithmetic)");
  }
  r.finish();
  if (!from || !to || (!factor && !step)) return;
  if (*to < *from) {
    node.error(d, fmt::format("the range is empty: 'to' ({}) is below 'from' ({})", *to, *from));
    return;
  }
  for (double v = *from; v <= *to * (1 + 1e-12); v = factor ? v * *factor : v + *step) {
    if (axis.values.size() >= kMaxValuesPerAxis) {
      node.error(d, fmt::format("the range has more than {} values", kMaxValuesPerAxis));
      return;
    }
    double rounded = std::round(v);
    std::string text = std::fabs(v - rounded) < 1e-9
                           ? fmt::format("{}", static_cast<long long>(rounded))
                           : fmt::format("{}", v);
    if (unit) text += *unit;
    axis.values.emplace_back(text);
    axis.labels.push_back(text);
  }
}

// "pipeline.stages" -> {"pipeline", "stages"}.
std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

// Whether the key path `inner` lies strictly inside `outer` ("pipeline.stages" in "pipeline").
bool inside(const std::string& inner, const std::string& outer) {
  return inner.size() > outer.size() && inner.rfind(outer, 0) == 0 && inner[outer.size()] == '.';
}

// A list axis names each value once: a repeat is the same point run twice.
void check_distinct_values(const YamlNode& list, const SweepAxis& axis, DiagnosticList& d) {
  const std::vector<YamlNode> elements = list.elements();
  std::unordered_set<std::string_view> seen;  // an axis may list 100,000 values: no pairwise scan
  for (std::size_t i = 0; i < axis.labels.size(); ++i) {
    if (!seen.insert(axis.labels[i]).second)
      elements[i].error(d, fmt::format("the value {} is given twice in this axis", axis.labels[i]));
  }
}

// Every key on an axis's path above its leaf must be a mapping in the base, or absent (then the
// point creates it): an axis going inside a value (pipeline.stages.x under stages: 4) would
// silently replace that value with a mapping.
void check_path_in_base(const std::string& path, const YAML::Node& base,
                        const std::string& base_file, const YamlNode& key, DiagnosticList& d) {
  const std::vector<std::string> keys = split_key_path(path);
  YAML::Node node = base;
  std::string walked;
  for (std::size_t k = 0; k + 1 < keys.size(); ++k) {
    const YAML::Node& current = node;
    const YAML::Node next = current[keys[k]];
    walked += (walked.empty() ? "" : ".") + keys[k];
    if (!next) return;
    if (!next.IsMap()) {
      const YAML::Mark m = next.Mark();
      key.error(d, fmt::format("'{}' is {} in the base ({}:{}:{}), not a mapping: the axis cannot "
                               "set a key inside it",
                               walked, YamlNode(next, base_file, walked).describe(), base_file,
                               m.line + 1, m.column + 1));
      return;
    }
    node.reset(next);
  }
}

}  // namespace

std::int64_t SweepSpec::point_count() const {
  if (!constraints.empty()) return static_cast<std::int64_t>(kept.size());
  std::int64_t n = 1;
  for (const std::vector<std::size_t>& dim : dimensions)
    n *= static_cast<std::int64_t>(axes[dim.front()].values.size());
  return n;
}

std::vector<std::size_t> SweepSpec::coordinates(std::int64_t index) const {
  if (!constraints.empty()) index = kept.at(static_cast<std::size_t>(index));
  std::vector<std::size_t> c(axes.size());
  for (std::size_t i = dimensions.size(); i-- > 0;) {
    auto n = static_cast<std::int64_t>(axes[dimensions[i].front()].values.size());
    for (std::size_t a : dimensions[i]) c[a] = static_cast<std::size_t>(index % n);
    index /= n;
  }
  return c;
}

void set_at_key_path(YAML::Node& tree, const std::string& path, const YAML::Node& value) {
  // Walk the dotted path, creating maps on the way (replacing what is not a map), and set the
  // leaf.
  const std::vector<std::string> keys = split_key_path(path);
  std::vector<YAML::Node> chain{tree};
  for (std::size_t k = 0; k + 1 < keys.size(); ++k) {
    YAML::Node next = chain.back()[keys[k]];
    if (!next.IsMap()) {
      chain.back()[keys[k]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[k]];
    }
    chain.push_back(next);
  }
  chain.back()[keys.back()] = YAML::Clone(value);
}

YAML::Node at_key_path(const YAML::Node& tree, const std::string& path) {
  YAML::Node node = tree;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const YAML::Node& current = node;
    if (!current.IsMap() || !current[key]) return YAML::Node(YAML::NodeType::Undefined);
    node.reset(current[key]);
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

std::string SweepSpec::scenario_yaml(std::int64_t index) const {
  YAML::Node tree = YAML::Clone(base);
  std::vector<std::size_t> c = coordinates(index);
  for (std::size_t i = 0; i < axes.size(); ++i)
    set_at_key_path(tree, axes[i].path, axes[i].values[c[i]]);
  if (schedules && !schedules.IsNull()) tree["schedules"] = YAML::Clone(schedules);
  YAML::Emitter e;
  e << tree;
  return std::string(e.c_str()) + "\n";
}

SweepSpec load_sweep(const std::string& path, std::int64_t max_points) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_file(path, d);
  d.throw_if_any();
  SweepSpec spec;
  spec.file = path;
  MapReader top(doc.root(), d, {"base", "axes", "schedules", "zip", "constraints"});
  std::optional<std::string> base = top.string("base");
  if (!top.has("base")) top.require("base");
  if (auto s = top.get("schedules")) {
    if (!s->is_sequence())
      s->error(d, fmt::format("expected a list of schedules, got {}", s->describe()));
    spec.schedules = s->raw();
  }
  std::vector<YamlNode> axis_keys;  // where each axis is named, for the checks on the base
  if (auto axes = top.require("axes")) {
    if (!axes->is_map()) {
      axes->error(
          d, fmt::format("expected a mapping of key paths to values, got {}", axes->describe()));
    } else {
      for (const auto& kv : axes->raw()) {
        SweepAxis axis;
        axis.path = kv.first.as<std::string>();
        YamlNode value(kv.second, path, join_key_path("axes", axis.path));
        YamlNode key(kv.first, path, join_key_path("axes", axis.path));
        bool path_ok = !axis.path.empty() && axis.path.front() != '.' && axis.path.back() != '.' &&
                       axis.path.find("..") == std::string::npos;
        if (!path_ok)
          key.error(
              d, fmt::format("'{}' is not a dotted key path such as pipeline.stages", axis.path));
        if (value.is_sequence()) {
          for (const YamlNode& v : value.elements()) {
            axis.values.push_back(v.raw());
            axis.labels.push_back(scalar_label(v.raw()));
          }
        } else if (value.is_map()) {
          read_range(value, axis, d);
        } else {
          value.error(
              d,
              fmt::format("expected a list of values or a range {{from, to, factor|step}}, got {}",
                          value.describe()));
        }
        if (axis.values.empty() && value.is_sequence())
          value.error(d, "an axis needs at least one value");
        for (const SweepAxis& other : spec.axes) {
          if (other.path == axis.path)
            key.error(d, fmt::format("the axis '{}' is given twice", axis.path));
          else if (inside(axis.path, other.path) || inside(other.path, axis.path))
            key.error(d, fmt::format("the axes '{}' and '{}' overlap: one is inside the other, so "
                                     "a point would set the same key twice",
                                     other.path, axis.path));
        }
        if (value.is_sequence()) check_distinct_values(value, axis, d);
        axis_keys.push_back(key);
        spec.axes.push_back(std::move(axis));
      }
    }
  }
  read_sweep_zip(top.get("zip"), spec, d);
  const std::optional<YamlNode> constraints = top.get("constraints");
  top.finish();
  d.throw_if_any();
  std::filesystem::path base_path = std::filesystem::path(path).parent_path() / *base;
  spec.base_file = base_path.lexically_normal().string();
  YamlDocument base_doc = YamlDocument::load_file(spec.base_file, d);
  d.throw_if_any();
  spec.base = base_doc.root().raw();
  if (!spec.base.IsMap())
    throw InputError(fmt::format("{}: the base scenario is not a mapping", spec.base_file));
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    check_path_in_base(spec.axes[a].path, spec.base, spec.base_file, axis_keys[a], d);
  }
  read_sweep_constraints(constraints, spec, d);
  d.throw_if_any();
  double points = 1;
  for (const std::vector<std::size_t>& dim : spec.dimensions)
    points *= static_cast<double>(spec.axes[dim.front()].values.size());
  if (points > static_cast<double>(max_points)) {
    throw InputError(fmt::format("{}: the sweep has {:.0f} points{}; at most {} are allowed", path,
                                 points, spec.constraints.empty() ? "" : " before its constraints",
                                 max_points));
  }
  if (constraints) keep_constrained_points(spec, constraints->location());
  return spec;
}

}  // namespace bubblesim
