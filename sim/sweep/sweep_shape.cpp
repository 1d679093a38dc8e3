#include "sim/sweep/sweep_shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace bubblesim {
namespace {

// A scalar as a number, or nullopt ("4", "0.5", "true" / "false" as 1 / 0).
std::optional<double> number_of(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  const std::string& s = node.Scalar();
  if (s == "true") return 1.0;
  if (s == "false") return 0.0;
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

int axis_named(const SweepSpec& spec, const std::string& path) {
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (spec.axes[a].path == path) return static_cast<int>(a);
  return -1;
}

// The short names of the parallel degrees (the plan's and Megatron's vocabulary), and the
// documented default of each parallelism key a base may leave out.
const std::map<std::string, std::string>& short_names() {
  static const std::map<std::string, std::string> names = {{"pp", "pipeline.stages"},
                                                           {"tp", "parallelism.tp"},
                                                           {"dp", "parallelism.dp"},
                                                           {"cp", "parallelism.cp"},
                                                           {"ep", "parallelism.ep"}};
  return names;
}

// Binds one name of a constraint: an axis path, a short name, an axis whose last key it is, or a
// numeric key of the base. Returns a message when it cannot.
std::string bind_name(const std::string& name, const SweepSpec& spec, SweepConstraint& c) {
  std::string path = name;
  int axis = axis_named(spec, path);
  if (axis < 0 && short_names().count(name) > 0) {
    path = short_names().at(name);
    axis = axis_named(spec, path);
  }
  if (axis < 0 && name.find('.') == std::string::npos) {
    std::vector<std::string> matches;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string& p = spec.axes[a].path;
      if (p.size() > name.size() && p.compare(p.size() - name.size(), name.size(), name) == 0 &&
          p[p.size() - name.size() - 1] == '.') {
        matches.push_back(p);
        axis = static_cast<int>(a);
      }
    }
    if (matches.size() > 1)
      return fmt::format("'{}' could be any of the axes {}: write the whole key path", name,
                         fmt::join(matches, ", "));
  }
  if (axis >= 0) {
    c.axis.push_back(axis);
    c.constant.push_back(0);
    return "";
  }
  const YAML::Node value = at_key_path(spec.base, path);
  std::optional<double> number;
  if (value.IsDefined()) {
    number = number_of(value);
    if (!number)
      return fmt::format("'{}' is '{}' in the base scenario, not a number", path,
                         value.IsScalar() ? value.Scalar() : "a mapping or list");
  } else if (path.rfind("parallelism.", 0) == 0 && short_names().count(path.substr(12)) > 0) {
    number = 1.0;  // a degree the base leaves out is 1 (docs/parallelism.md)
  } else {
    std::vector<std::string> axes;
    for (const SweepAxis& a : spec.axes) axes.push_back(a.path);
    return fmt::format(
        "'{}' is neither an axis ({}), a short name ({}) nor a key of the base "
        "scenario",
        name, fmt::join(axes, ", "), "pp, tp, dp, cp, ep");
  }
  c.axis.push_back(-1);
  c.constant.push_back(*number);
  return "";
}

}  // namespace

void read_sweep_zip(const std::optional<YamlNode>& zip, SweepSpec& spec, DiagnosticList& d) {
  std::vector<int> group_of(spec.axes.size(), -1);
  std::vector<std::vector<std::size_t>> groups;
  if (zip && !zip->is_sequence()) {
    zip->error(d, fmt::format("expected a list of groups of axes such as [[pipeline.stages, "
                              "parallelism.dp]], got {}",
                              zip->describe()));
  } else if (zip) {
    for (const YamlNode& group : zip->elements()) {
      if (!group.is_sequence() || group.elements().size() < 2) {
        group.error(d, fmt::format("a zip group lists two or more axes that advance together, "
                                   "got {}",
                                   group.is_sequence()
                                       ? fmt::format("a list of {}", group.elements().size())
                                       : group.describe()));
        continue;
      }
      std::vector<std::size_t> members;
      for (const YamlNode& entry : group.elements()) {
        const std::string path = entry.is_scalar() ? entry.raw().Scalar() : entry.describe();
        const int a = axis_named(spec, path);
        if (a < 0) {
          std::vector<std::string> axes;
          for (const SweepAxis& x : spec.axes) axes.push_back(x.path);
          entry.error(d, fmt::format("'{}' is not an axis of this sweep (axes: {})", path,
                                     fmt::join(axes, ", ")));
        } else if (group_of[static_cast<std::size_t>(a)] >= 0 ||
                   std::find(members.begin(), members.end(), static_cast<std::size_t>(a)) !=
                       members.end()) {
          entry.error(d, fmt::format("the axis '{}' is already in a zip group", path));
        } else {
          members.push_back(static_cast<std::size_t>(a));
        }
      }
      if (members.size() < 2) continue;  // an error was reported; the axes stay on their own
      for (std::size_t m : members) group_of[m] = static_cast<int>(groups.size());
      for (std::size_t m : members) {
        if (spec.axes[m].values.size() == spec.axes[members[0]].values.size()) continue;
        std::vector<std::string> counts;
        for (std::size_t k : members)
          counts.push_back(fmt::format("{} has {}", spec.axes[k].path, spec.axes[k].values.size()));
        group.error(d, fmt::format("the axes of a zip group take their values together and need "
                                   "as many each: {}",
                                   fmt::join(counts, ", ")));
        break;
      }
      groups.push_back(std::move(members));
    }
  }
  spec.dimensions.clear();
  std::vector<bool> placed(groups.size(), false);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const int g = group_of[a];
    if (g < 0) {
      spec.dimensions.push_back({a});
    } else if (!placed[static_cast<std::size_t>(g)]) {
      placed[static_cast<std::size_t>(g)] = true;
      std::vector<std::size_t> members = groups[static_cast<std::size_t>(g)];
      std::sort(members.begin(), members.end());
      spec.dimensions.push_back(std::move(members));
    }
  }
}

void read_sweep_constraints(const std::optional<YamlNode>& constraints, SweepSpec& spec,
                            DiagnosticList& d) {
  if (!constraints) return;
  if (!constraints->is_sequence()) {
    constraints->error(d, fmt::format("expected a list of expressions such as "
                                      "'parallelism.tp * pipeline.stages * parallelism.dp == 256', "
                                      "got {}",
                                      constraints->describe()));
    return;
  }
  for (const YamlNode& entry : constraints->elements()) {
    if (!entry.is_scalar()) {
      entry.error(d, fmt::format("expected an expression, got {}", entry.describe()));
      continue;
    }
    SweepConstraint c;
    try {
      c.expression = std::make_shared<const KeyExpression>(entry.raw().Scalar());
    } catch (const KeyExpressionError& e) {
      entry.error(d, fmt::format("'{}': {} (at character {})", entry.raw().Scalar(), e.what(),
                                 e.offset() + 1));
      continue;
    }
    bool ok = true;
    for (const std::string& name : c.expression->names()) {
      const std::string problem = bind_name(name, spec, c);
      if (!problem.empty()) {
        entry.error(d, fmt::format("'{}': {}", c.expression->text(), problem));
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    // Every value of an axis it reads must be a number.
    for (std::int32_t a : c.axis) {
      if (a < 0) continue;
      const SweepAxis& axis = spec.axes[static_cast<std::size_t>(a)];
      for (std::size_t v = 0; v < axis.values.size(); ++v) {
        if (number_of(axis.values[v])) continue;
        entry.error(d, fmt::format("'{}' reads the axis '{}', whose value '{}' is not a number",
                                   c.expression->text(), axis.path, axis.labels[v]));
        ok = false;
        break;
      }
      if (!ok) break;
    }
    if (ok) spec.constraints.push_back(std::move(c));
  }
}

void keep_constrained_points(SweepSpec& spec, const SourceLocation& where) {
  spec.kept.clear();
  if (spec.constraints.empty()) return;
  // The numbers of every axis value once, then each point of the product in order.
  std::vector<std::vector<double>> numbers(spec.axes.size());
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    for (const YAML::Node& v : spec.axes[a].values)
      numbers[a].push_back(number_of(v).value_or(0.0));
  }
  std::int64_t total = 1;
  for (const auto& dim : spec.dimensions)
    total *= static_cast<std::int64_t>(spec.axes[dim.front()].values.size());
  std::vector<std::size_t> at(spec.dimensions.size(), 0);  // the value index per dimension
  std::vector<std::vector<double>> values(spec.constraints.size());
  for (std::size_t k = 0; k < spec.constraints.size(); ++k)
    values[k].resize(spec.constraints[k].axis.size());
  std::vector<std::size_t> axis_value(spec.axes.size(), 0);
  for (std::int64_t raw = 0; raw < total; ++raw) {
    for (std::size_t i = 0; i < spec.dimensions.size(); ++i)
      for (std::size_t a : spec.dimensions[i]) axis_value[a] = at[i];
    bool keep = true;
    for (std::size_t k = 0; k < spec.constraints.size() && keep; ++k) {
      const SweepConstraint& c = spec.constraints[k];
      for (std::size_t n = 0; n < c.axis.size(); ++n) {
        values[k][n] = c.axis[n] < 0 ? c.constant[n]
                                     : numbers[static_cast<std::size_t>(c.axis[n])]
                                              [axis_value[static_cast<std::size_t>(c.axis[n])]];
      }
      const double v = c.expression->evaluate(values[k]);
      if (std::isnan(v)) {
        std::vector<std::string> point;
        for (std::size_t a = 0; a < spec.axes.size(); ++a)
          point.push_back(spec.axes[a].path + " = " + spec.axes[a].labels[axis_value[a]]);
        throw InputError({Diagnostic{where, "constraints",
                                     fmt::format("'{}' divides by zero at {}", c.expression->text(),
                                                 fmt::join(point, ", "))}});
      }
      keep = v != 0.0;
    }
    if (keep) spec.kept.push_back(raw);
    // The next point: the last dimension fastest.
    for (std::size_t i = spec.dimensions.size(); i-- > 0;) {
      if (++at[i] < spec.axes[spec.dimensions[i].front()].values.size()) break;
      at[i] = 0;
    }
  }
  if (spec.kept.empty()) {
    std::vector<std::string> texts;
    for (const SweepConstraint& c : spec.constraints) texts.push_back(c.expression->text());
    throw InputError({Diagnostic{
        where, "constraints",
        fmt::format("no point of the {} the axes make satisfies the constraints ({}): every point "
                    "would be left out",
                    total, fmt::join(texts, "; "))}});
  }
}

}  // namespace bubblesim
