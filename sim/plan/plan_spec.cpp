#include "sim/plan/plan_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "sim/plan/plan_axes.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/units/text_file.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

std::string flow_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << node;
  return e.c_str();
}

SourceLocation location(const YamlNode& node) { return node.location(); }

// The names a plan constraint may use: the layout's degrees.
const std::vector<std::string>& constraint_names() {
  static const std::vector<std::string> names = {
      "tp", "pp", "dp", "cp", "ep", "zero", "micro_batch_size"};
  return names;
}

// Removes the key at a dotted path from `map` (a clone), and its parent when that empties it.
void remove_at(YAML::Node& map, const std::string& path) {
  const std::size_t dot = path.find('.');
  if (dot == std::string::npos) {
    map.remove(path);
    return;
  }
  const std::string head = path.substr(0, dot);
  YAML::Node child = map[head];
  if (!child.IsMap()) return;
  remove_at(child, path.substr(dot + 1));
  if (child.size() == 0) map.remove(head);
}

void read_search(const YamlNode& search, PlanSpec& spec, DiagnosticList& d) {
  std::vector<std::string> allowed = {"constraints"};
  for (const PlanAxis& a : plan_axes()) allowed.emplace_back(a.name);
  MapReader r(search, d, allowed);
  for (std::size_t i = 0; i < plan_axes().size(); ++i) {
    const std::optional<YamlNode> node = r.get(std::string(plan_axes()[i].name));
    if (!node) continue;
    spec.where[i] = location(*node);
    if (node->is_sequence()) {
      if (node->elements().empty()) node->error(d, "give at least one value");
      for (const YamlNode& v : node->elements()) {
        const std::string text = flow_text(v.raw());
        if (std::find(spec.values[i].begin(), spec.values[i].end(), text) != spec.values[i].end())
          v.error(d, fmt::format("the value {} is given twice", text));
        spec.values[i].push_back(text);
      }
    } else if (node->is_scalar() || node->is_map()) {
      spec.values[i].push_back(flow_text(node->raw()));
    } else {
      node->error(d, fmt::format("expected a value or a list of values, got {}", node->describe()));
    }
  }
  if (const std::optional<YamlNode> list = r.get("constraints")) {
    if (!list->is_sequence()) {
      list->error(d, fmt::format("expected a list of expressions such as 'tp * pp <= 64', got {}",
                                 list->describe()));
    } else {
      for (const YamlNode& e : list->elements()) {
        if (!e.is_scalar()) {
          e.error(d, fmt::format("expected an expression, got {}", e.describe()));
          continue;
        }
        try {
          auto expression = std::make_shared<const KeyExpression>(e.raw().Scalar());
          for (const std::string& name : expression->names()) {
            const auto& known = constraint_names();
            if (std::find(known.begin(), known.end(), name) == known.end() && name != "mbs")
              throw KeyExpressionError(
                  fmt::format("'{}' is not one of {} (or mbs)", name, fmt::join(known, ", ")),
                  e.raw().Scalar().find(name));
          }
          spec.constraints.push_back(std::move(expression));
          spec.constraint_where.push_back(location(e));
        } catch (const KeyExpressionError& x) {
          e.error(d, fmt::format("'{}': {} (at character {})", e.raw().Scalar(), x.what(),
                                 x.offset() + 1));
        }
      }
    }
  }
  r.finish();
}

// A knob the base sets is fixed at its value; given in `search:` too, it is an error.
void read_fixed_keys(const YamlNode& root, PlanSpec& spec, DiagnosticList& d) {
  for (std::size_t i = 0; i < plan_axes().size(); ++i) {
    const PlanAxis& axis = plan_axes()[i];
    const YAML::Node node = at_key_path(root.raw(), std::string(axis.key));
    if (!node.IsDefined()) continue;
    const YamlNode at(node, spec.file, std::string(axis.key));
    if (!spec.values[i].empty()) {
      at.error(d, fmt::format("the plan searches {} (search.{} at line {}): give its values in "
                              "one place",
                              axis.key, axis.name, spec.where[i].line));
      continue;
    }
    spec.where[i] = location(at);
    if (axis.stage == AxisStage::Schedule && node.IsSequence()) {
      for (const YAML::Node& v : node) spec.values[i].push_back(flow_text(v));
    } else {
      spec.values[i].push_back(flow_text(node));
    }
    remove_at(spec.base, std::string(axis.key));
  }
  // What the GPU count and the global batch decide.
  for (const char* key : {"parallelism.dp", "pipeline.microbatches"}) {
    const YAML::Node node = at_key_path(root.raw(), key);
    if (!node.IsDefined()) continue;
    YamlNode(node, spec.file, key)
        .error(d, std::string(key) == "parallelism.dp"
                      ? "the plan derives dp from the GPU count (dp = GPUs / (tp x pp x cp)): "
                        "leave it out"
                      : "the plan derives the microbatches from training.global_batch: leave "
                        "pipeline.microbatches out");
  }
  for (const char* key : {"model", "training"}) {
    if (!root.raw()[key]) root.error(d, fmt::format("a plan needs '{}' (docs/plan.md)", key));
  }
}

}  // namespace

PlanSpec load_plan_string(const std::string& text, const std::string& name,
                          const std::string& base_dir) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, name, d);
  d.throw_if_any();
  PlanSpec spec;
  spec.file = name;
  spec.base_dir = base_dir;
  spec.text = text;
  spec.document = doc.root().raw();
  spec.values.resize(plan_axes().size());
  spec.where.resize(plan_axes().size());
  const YamlNode root = doc.root();
  if (!root.is_map()) {
    root.error(d, fmt::format("a plan is a mapping of scenario sections and 'search', got {}",
                              root.describe()));
    d.throw_if_any();
  }
  spec.base = YAML::Clone(root.raw());
  spec.name = std::filesystem::path(name).stem().string();
  if (const YAML::Node n = root.raw()["name"]; n && n.IsScalar()) spec.name = n.Scalar();
  if (root.raw()["search"]) read_search(root.child("search"), spec, d);
  spec.base.remove("search");
  spec.base.remove("name");
  read_fixed_keys(root, spec, d);
  d.throw_if_any();
  return spec;
}

PlanSpec load_plan_file(const std::string& path) {
  return load_plan_string(read_text_file(path), path, scenario_base_dir(path));
}

PlanSpec plan_from_flags(const PlanFlags& f) {
  std::vector<std::string> missing;
  if (f.model.empty()) missing.emplace_back("--model");
  if (f.gpu.empty()) missing.emplace_back("--gpu");
  if (f.nodes <= 0 && f.topology.empty()) missing.emplace_back("--nodes (or --topology)");
  if (f.global_batch <= 0) missing.emplace_back("--global-batch");
  if (f.seq_len <= 0) missing.emplace_back("--seq-len");
  if (!missing.empty()) {
    throw InputError(
        fmt::format("plan: give a plan file, or the job as flags: missing {} (docs/plan.md)",
                    fmt::join(missing, ", ")));
  }
  YAML::Node root(YAML::NodeType::Map);
  root["name"] = fmt::format("{}-{}", f.model, f.gpu);
  root["model"]["preset"] = f.model;
  root["model"]["seq_len"] = f.seq_len;
  root["cluster"]["gpu"]["preset"] = f.gpu;
  if (!f.topology.empty()) {
    root["topology"] = f.topology;
  } else {
    // The multi-node builder's links are a DGX H100's (topologies/topology_builders.h).
    root["topology"]["builder"] = "multi-node";
    root["topology"]["nodes"] = f.nodes;
    root["topology"]["gpus_per_node"] = f.gpus_per_node;
  }
  root["training"]["global_batch"] = f.global_batch;
  YAML::Emitter e;
  e << root;
  return load_plan_string(std::string(e.c_str()) + "\n", "<flags>", ".");
}

}  // namespace bubblesim
