#include "sim/plan/plan_enumerate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "sim/costmodel/model_costs.h"
#include "sim/engine/collectives.h"
#include "sim/runner/resolve.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/sweep_errors.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

// The degrees a knob value sets (the numeric knobs of the layout and the micro-batch).
void set_degree(LayoutDegrees& deg, std::string_view name, std::int64_t v) {
  if (name == "tp") deg.tp = v;
  if (name == "pp") deg.pp = v;
  if (name == "cp") deg.cp = v;
  if (name == "ep") deg.ep = v;
  if (name == "zero") deg.zero = v;
  if (name == "micro_batch_size") deg.micro_batch_size = v;
}

bool numeric_knob(std::string_view name) {
  return name == "tp" || name == "pp" || name == "cp" || name == "ep" || name == "zero" ||
         name == "micro_batch_size";
}

std::int64_t number(const std::string& text) {
  std::size_t used = 0;
  const std::int64_t v = std::stoll(text, &used);
  if (used != text.size()) throw std::invalid_argument(text);
  return v;
}

// A plan's error found by loading a candidate's scenario: located at the knob that set the key,
// else at the key in the plan file.
InputError relocated(const PlanSpec& spec, const InputError& e) {
  std::vector<Diagnostic> out;
  for (Diagnostic d : e.diagnostics()) {
    bool moved = false;
    for (std::size_t i = 0; i < plan_axes().size() && !moved; ++i) {
      const std::string key(plan_axes()[i].key);
      if (d.key_path.rfind(key, 0) == 0 && spec.where[i].line > 0) {
        d.where = spec.where[i];
        moved = true;
      }
    }
    out.push_back(moved ? d : located_in_tree(d, spec.document, spec.file));
  }
  return InputError(std::move(out));
}

std::string family_of(const LayoutDegrees& d, bool zero_applies) {
  std::string f = d.dp > 0 ? fmt::format("tp{} pp{} dp{}", d.tp, d.pp, d.dp)
                           : fmt::format("tp{} pp{} (no dp)", d.tp, d.pp);
  if (d.cp > 1) f += fmt::format(" cp{}", d.cp);
  if (d.ep > 1) f += fmt::format(" ep{}", d.ep);
  if (zero_applies) f += fmt::format(" zero{}", d.zero);
  return f;
}

// Why a layout cannot divide, or "".
std::string divisibility(const PlanJob& job, const LayoutDegrees& d) {
  const PlanContext& c = job.context;
  if (c.gpus % (d.tp * d.pp * d.cp) != 0)
    return fmt::format("{} GPUs are not a multiple of tp x pp x cp = {}", c.gpus,
                       d.tp * d.pp * d.cp);
  if (c.heads > 0 && (c.heads % d.tp != 0 || c.kv_heads % d.tp != 0))
    return fmt::format("{} attention heads ({} KV heads) do not split over tp {}", c.heads,
                       c.kv_heads, d.tp);
  if (d.pp > c.layers)
    return fmt::format("{} layers cannot fill {} pipeline stages", c.layers, d.pp);
  if (d.cp > 1 && !c.context_parallel_ok)
    return "context parallelism needs FlashAttention without MLA or MoE";
  if (d.cp > 1 && c.seq_len % (2 * d.cp) != 0)
    return fmt::format("seq_len {} does not split into 2 x cp = {} chunks", c.seq_len, 2 * d.cp);
  if (d.ep > 1 && (c.experts == 0 || c.experts % d.ep != 0))
    return c.experts == 0 ? "expert parallelism needs a MoE model"
                          : fmt::format("ep {} does not divide the {} experts", d.ep, c.experts);
  if (d.ep > 1 && d.dp % d.ep != 0) return fmt::format("ep {} does not divide dp {}", d.ep, d.dp);
  return "";
}

// The static memory every GPU holds at least (the parameters of an average stage's TP shard at
// the ZeRO level's bytes per parameter; the largest stage holds no less), when it alone is over
// the budget. Dense models only: experts split by ep, not tp.
std::string static_memory_bound(const PlanJob& job, const LayoutDegrees& d, bool zero_applies,
                                double& over) {
  if (job.memory_budget <= 0 || job.context.experts > 0 || job.parameters <= 0) return "";
  ZeroSpec zero;
  zero.level = zero_applies ? static_cast<std::int32_t>(d.zero) : 0;
  zero.dp = d.dp * d.cp;
  const double per_gpu = job.parameters / static_cast<double>(d.tp * d.pp);
  const double bytes = per_gpu * static_bytes_per_parameter(job.dtype_bytes, zero);
  if (bytes <= job.memory_budget) return "";
  over = bytes - job.memory_budget;
  return fmt::format(
      "static memory at least {:.1f} GiB per GPU ({:.2f}B parameters x {:.2f} bytes at ZeRO {}) "
      "over the {:.1f} GiB budget before any activation",
      to_gib(bytes), per_gpu / 1e9, static_bytes_per_parameter(job.dtype_bytes, zero), zero.level,
      to_gib(job.memory_budget));
}

double value_of(const std::string& name, const LayoutDegrees& d) {
  if (name == "tp") return static_cast<double>(d.tp);
  if (name == "pp") return static_cast<double>(d.pp);
  if (name == "dp") return static_cast<double>(d.dp);
  if (name == "cp") return static_cast<double>(d.cp);
  if (name == "ep") return static_cast<double>(d.ep);
  if (name == "zero") return static_cast<double>(d.zero);
  return static_cast<double>(d.micro_batch_size);  // micro_batch_size, mbs
}

bool allowed_by_constraints(const PlanSpec& spec, const LayoutDegrees& d) {
  for (const auto& c : spec.constraints) {
    std::vector<double> values;
    for (const std::string& name : c->names()) values.push_back(value_of(name, d));
    const double v = c->evaluate(values);
    if (std::isnan(v) || v == 0.0) return false;
  }
  return true;
}

// Every combination of the knobs `which` (indices into plan_axes()), first slowest.
template <typename F>
void for_each_combination(const std::vector<std::size_t>& which,
                          const std::vector<std::vector<std::string>>& search, F visit) {
  std::vector<std::size_t> at(which.size(), 0);
  while (true) {
    visit(at);
    std::size_t k = which.size();
    while (k > 0) {
      --k;
      if (++at[k] < search[which[k]].size()) break;
      at[k] = 0;
      if (k == 0) return;
    }
    if (which.empty()) return;
  }
}

}  // namespace

std::string candidate_scenario(const PlanSpec& spec, const std::vector<std::string>& values,
                               const LayoutDegrees& degrees,
                               const std::vector<std::string>& schedules,
                               const std::string& bucket) {
  YAML::Node tree = YAML::Clone(spec.base);
  tree["name"] = spec.name;
  for (std::size_t i = 0; i < plan_axes().size() && i < values.size(); ++i) {
    const PlanAxis& axis = plan_axes()[i];
    if (values[i].empty() || axis.stage == AxisStage::Schedule || axis.stage == AxisStage::Bucket)
      continue;
    if ((axis.name == "cp" || axis.name == "ep") && values[i] == "1") continue;
    set_at_key_path(tree, std::string(axis.key), YAML::Load(plan_axis_yaml(axis, values[i])));
  }
  set_at_key_path(tree, "parallelism.dp", YAML::Node(degrees.dp));
  // Whole layers placed as evenly as the stages allow, unless the plan places them.
  const YAML::Node& model = tree["model"];
  if (model.IsMap() && !model["layers_per_stage"] && !model["layers_per_chunk"])
    set_at_key_path(tree, "model.layers_per_stage", YAML::Node("balanced"));
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& s : schedules) list.push_back(YAML::Load(s));
  tree["schedules"] = list;
  if (!bucket.empty()) set_at_key_path(tree, "data_parallel.bucket", YAML::Node(bucket));
  YAML::Emitter e;
  e << tree;
  return std::string(e.c_str()) + "\n";
}

PlanJob read_plan_job(const PlanSpec& spec, const Registry& registry) {
  const auto& axes = plan_axes();
  std::vector<std::string> values(axes.size());
  LayoutDegrees deg;
  std::vector<std::string> schedules;
  DiagnosticList d;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::vector<std::string> vals =
        spec.values[i].empty() ? axes[i].defaults(PlanContext{}) : spec.values[i];
    if (axes[i].stage == AxisStage::Schedule) {
      schedules = vals;
      continue;
    }
    if (numeric_knob(axes[i].name)) {
      for (const std::string& v : vals) {
        std::int64_t n = -1;
        try {
          n = number(v);
        } catch (const std::exception&) {
        }
        const std::int64_t low = axes[i].name == "zero" ? 0 : 1;
        const std::int64_t high = axes[i].name == "zero" ? 3 : 1 << 20;
        if (n < low || n > high) {
          d.add(Diagnostic{spec.where[i], fmt::format("search.{}", axes[i].name),
                           fmt::format("'{}' is not a whole number from {} to {}", v, low, high)});
        }
      }
    }
    if (axes[i].name == "bucket") {
      for (const std::string& v : vals) {
        DiagnosticList local;
        if (!YamlNode(YAML::Node(v), spec.file, "search.bucket").as_bytes(local) || !local.empty())
          d.add(Diagnostic{spec.where[i], "search.bucket",
                           fmt::format("'{}' is not a size such as 25MiB", v)});
      }
    }
    values[i] = vals.front();
  }
  d.throw_if_any();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (numeric_knob(axes[i].name) && axes[i].name != "zero")
      set_degree(deg, axes[i].name, number(values[i]));
  deg.dp = 1;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].applies(deg)) values[i].clear();
  Scenario sc;
  ResolvedScenario resolved;
  try {
    sc = load_scenario_string(candidate_scenario(spec, values, deg, schedules, ""), spec.file,
                              spec.base_dir, registry);
    resolved = resolve(sc);
  } catch (const InputError& e) {
    throw relocated(spec, e);
  }
  if (!sc.model) throw InputError(fmt::format("{}: a plan needs a model (model:)", spec.file));
  if (!sc.communication.topology)
    throw InputError(fmt::format("{}: a plan needs a cluster topology (topology:)", spec.file));
  PlanJob job;
  const Topology& topo = *sc.communication.topology;
  PlanContext& c = job.context;
  const std::vector<VertexId> gpus = topo.gpus();
  c.gpus = static_cast<std::int64_t>(gpus.size());
  const std::vector<std::int32_t> nodes = node_of_gpus(topo, gpus);
  c.gpus_per_node = std::count(nodes.begin(), nodes.end(), nodes.empty() ? 0 : nodes.front());
  const TransformerModel& m = *sc.model;
  c.layers = m.layers;
  c.heads = m.attention.heads;
  c.kv_heads = m.kv();
  c.seq_len = m.seq_len;
  c.experts = m.moe ? m.moe->experts : 0;
  c.context_parallel_ok = m.attention.kind == AttentionKind::Flash && !m.attention.mla && !m.moe;
  c.global_batch = static_cast<std::int64_t>(sc.microbatches) * m.micro_batch_size;
  job.parameters = resolved.model_costs ? resolved.model_costs->parameters : 0.0;
  job.dtype_bytes = m.dtype.bytes;
  for (const Bytes& b : resolved.memory_budget)
    job.memory_budget =
        job.memory_budget > 0 ? std::min(job.memory_budget, b.as_double()) : b.as_double();
  job.model = m.preset.empty() ? fmt::format("{} layers, hidden {}", m.layers, m.hidden) : m.preset;
  job.gpu = sc.gpu && !sc.gpu->preset.empty() ? sc.gpu->preset : "custom GPU";
  return job;
}

std::vector<std::vector<std::string>> searched_values(const PlanSpec& spec, const PlanJob& job) {
  std::vector<std::vector<std::string>> out;
  for (std::size_t i = 0; i < plan_axes().size(); ++i)
    out.push_back(spec.values[i].empty() ? plan_axes()[i].defaults(job.context) : spec.values[i]);
  return out;
}

std::vector<PlanLoadUnit> enumerate_candidates(const PlanSpec& spec, const PlanJob& job,
                                               const std::vector<std::vector<std::string>>& search,
                                               PlanResult& result) {
  const auto& axes = plan_axes();
  std::vector<std::size_t> layout_knobs, load_knobs;
  std::size_t bucket_knob = 0, schedule_knob = 0;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].stage == AxisStage::Layout) layout_knobs.push_back(i);
    if (axes[i].stage == AxisStage::Load) load_knobs.push_back(i);
    if (axes[i].stage == AxisStage::Bucket) bucket_knob = i;
    if (axes[i].stage == AxisStage::Schedule) schedule_knob = i;
  }
  std::vector<PlanLoadUnit> units;
  std::set<std::vector<std::string>> seen;  // knobs that do not apply collapse combinations
  std::int64_t excluded = 0;
  auto expand = [&](std::vector<std::string> values, LayoutDegrees deg, bool zero_applies,
                    PlanRejection rejection, const std::string& reason, double over) {
    for_each_combination(load_knobs, search, [&](const std::vector<std::size_t>& at) {
      for (std::size_t k = 0; k < load_knobs.size(); ++k) {
        const std::size_t i = load_knobs[k];
        values[i] = search[i][at[k]];
        if (axes[i].name == "micro_batch_size") deg.micro_batch_size = number(values[i]);
      }
      for (std::size_t i : load_knobs)
        if (!axes[i].applies(deg)) values[i].clear();
      if (!seen.insert(values).second) return;
      if (!allowed_by_constraints(spec, deg)) {
        ++excluded;
        return;
      }
      PlanRejection why = rejection;
      std::string text = reason;
      if (why == PlanRejection::None &&
          job.context.global_batch % (deg.micro_batch_size * deg.dp) != 0) {
        why = PlanRejection::Divisibility;
        text = fmt::format("global batch {} is not a multiple of micro_batch_size x dp = {} x {}",
                           job.context.global_batch, deg.micro_batch_size, deg.dp);
      }
      PlanLoadUnit unit;
      unit.values = values;
      unit.degrees = deg;
      unit.schedules = axes[schedule_knob].applies(deg) ? search[schedule_knob]
                                                        : std::vector<std::string>{"1f1b"};
      unit.buckets =
          axes[bucket_knob].applies(deg) ? search[bucket_knob] : std::vector<std::string>{""};
      unit.candidate.assign(unit.schedules.size(), {});
      for (std::size_t s = 0; s < unit.schedules.size(); ++s) {
        for (const std::string& bucket : unit.buckets) {
          PlanCandidate c;
          c.values = values;
          c.values[schedule_knob] = unit.schedules[s];
          c.values[bucket_knob] = bucket;
          c.degrees = deg;
          if (!zero_applies) c.degrees.zero = 0;
          c.schedule = schedule_entry_label(unit.schedules[s]);
          c.family = family_of(deg, zero_applies);
          c.rejection = why;
          c.reason = text;
          c.over_budget_bytes = over;
          unit.candidate[s].push_back(result.candidates.size());
          result.candidates.push_back(std::move(c));
        }
      }
      if (why == PlanRejection::None) units.push_back(std::move(unit));
    });
  };
  for_each_combination(layout_knobs, search, [&](const std::vector<std::size_t>& at) {
    std::vector<std::string> values(axes.size());
    LayoutDegrees deg;
    for (std::size_t k = 0; k < layout_knobs.size(); ++k) {
      const std::size_t i = layout_knobs[k];
      values[i] = search[i][at[k]];
      set_degree(deg, axes[i].name, number(values[i]));
    }
    const std::int64_t ranks = deg.tp * deg.pp * deg.cp;
    deg.dp = job.context.gpus % ranks == 0 ? job.context.gpus / ranks : 0;
    for (std::size_t i : layout_knobs)
      if (!axes[i].applies(deg)) values[i].clear();
    const bool zero_applies = axes[static_cast<std::size_t>(plan_axis_index("zero"))].applies(deg);
    if (!zero_applies) deg.zero = 0;
    double over = 0.0;
    std::string reason = divisibility(job, deg);
    PlanRejection why = reason.empty() ? PlanRejection::None : PlanRejection::Divisibility;
    if (reason.empty()) {
      reason = static_memory_bound(job, deg, zero_applies, over);
      if (!reason.empty()) why = PlanRejection::Memory;
    }
    expand(values, deg, zero_applies, why, reason, over);
  });
  result.excluded_by_constraints = excluded;
  return units;
}

}  // namespace bubblesim
