#include "sim/plan/plan_axes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace bubblesim {
namespace {

// Powers of two from 1 up to `limit`.
std::vector<std::string> powers_of_two(std::int64_t limit) {
  std::vector<std::string> out;
  for (std::int64_t v = 1; v <= std::max<std::int64_t>(limit, 1); v *= 2)
    out.push_back(std::to_string(v));
  return out;
}

// TP inside a node (its collectives run on every layer: NVLink, not the NICs), splitting the
// query and KV heads evenly.
std::vector<std::string> tp_defaults(const PlanContext& c) {
  std::vector<std::string> out;
  for (const std::string& v : powers_of_two(c.gpus_per_node > 0 ? c.gpus_per_node : 8)) {
    const std::int64_t t = std::stoll(v);
    if ((c.heads == 0 || c.heads % t == 0) && (c.kv_heads == 0 || c.kv_heads % t == 0))
      out.push_back(v);
  }
  return out;
}

// Pipelines of up to 32 stages with at least two layers a stage.
std::vector<std::string> pp_defaults(const PlanContext& c) {
  return powers_of_two(
      std::min<std::int64_t>({32, c.gpus, std::max<std::int64_t>(c.layers / 2, 1)}));
}

// Context parallelism pays where attention dominates: from 16k tokens (the Llama 3 paper's long
// context stage used CP 16 at 131k; Megatron-Bridge's 8k recipes run CP 1 or 2).
std::vector<std::string> cp_defaults(const PlanContext& c) {
  if (!c.context_parallel_ok || c.seq_len < 16384) return {"1"};
  return powers_of_two(std::min<std::int64_t>(8, c.gpus));
}

// Expert parallelism over the routed experts, up to 64-way (DeepSeek-V3's EP 64).
std::vector<std::string> ep_defaults(const PlanContext& c) {
  if (c.experts <= 1) return {"1"};
  std::vector<std::string> out;
  for (const std::string& v : powers_of_two(std::min<std::int64_t>(64, c.experts)))
    if (c.experts % std::stoll(v) == 0) out.push_back(v);
  return out;
}

// DDP (0), Megatron's distributed optimizer (1), FSDP / ZeRO-3 (3).
std::vector<std::string> zero_defaults(const PlanContext&) { return {"0", "1", "3"}; }
std::vector<std::string> micro_batch_defaults(const PlanContext&) { return {"1", "2"}; }
std::vector<std::string> recompute_defaults(const PlanContext&) {
  return {"none", "selective", "full"};
}
// Sequence parallelism whenever TP splits the layers (Megatron's recipes always turn it on).
std::vector<std::string> sp_defaults(const PlanContext&) { return {"true"}; }
// PyTorch DDP's bucket_cap_mb default, 25 MiB (bubblesim's default too).
std::vector<std::string> bucket_defaults(const PlanContext&) { return {"25MiB"}; }
std::vector<std::string> schedule_defaults(const PlanContext&) {
  return {"1f1b",
          "{name: interleaved-1f1b, params: {chunks: 2}}",
          "{name: interleaved-1f1b, params: {chunks: 4}}",
          "zb-h1",
          "zb-v",
          "dualpipe-v"};
}

std::string as_is(const std::string& v) { return v; }
std::string micro_batch_label(const std::string& v) { return "mbs" + v; }
// "full", "full(2 layers)" for {policy: full, layers: 2}.
std::string recompute_label(const std::string& v) {
  if (v.find('{') == std::string::npos) return v;
  const YAML::Node n = YAML::Load(v);
  std::string out = n["policy"] ? n["policy"].as<std::string>() : v;
  if (n["layers"]) out += "(" + n["layers"].as<std::string>() + " layers)";
  return out;
}
std::string sp_label(const std::string& v) { return v == "true" ? "sp" : "no-sp"; }
std::string bucket_label(const std::string& v) { return "bucket " + v; }

bool always(const LayoutDegrees&) { return true; }
bool sharded(const LayoutDegrees& l) { return l.dp * l.cp > 1; }
// The end-of-step gradient buckets are DDP's (ZeRO 0): the sharded engines size their own
// (Megatron's distributed optimizer from DP and only with overlap, FSDP per unit inside the ops),
// and a scenario that sets a bucket for them is refused (data_parallel_engine.h).
bool bucketed(const LayoutDegrees& l) { return sharded(l) && l.zero == 0; }
bool tensor_parallel(const LayoutDegrees& l) { return l.tp > 1; }
bool pipelined(const LayoutDegrees& l) { return l.pp > 1; }

}  // namespace

const std::vector<PlanAxis>& plan_axes() {
  static const std::vector<PlanAxis> axes = {
      {"tp", "parallelism.tp", AxisStage::Layout, "tensor-parallel degree", tp_defaults, always,
       as_is},
      {"pp", "pipeline.stages", AxisStage::Layout, "pipeline stages", pp_defaults, always, as_is},
      {"cp", "parallelism.cp", AxisStage::Layout, "context-parallel degree", cp_defaults, always,
       as_is},
      {"ep", "parallelism.ep", AxisStage::Layout, "expert-parallel degree (MoE)", ep_defaults,
       always, as_is},
      {"zero", "parallelism.zero", AxisStage::Layout,
       "ZeRO level over the data-parallel ranks (0 DDP, 1 distributed optimizer, 3 FSDP)",
       zero_defaults, sharded, as_is},
      {"micro_batch_size", "model.micro_batch_size", AxisStage::Load, "sequences per microbatch",
       micro_batch_defaults, always, micro_batch_label, true},
      {"recompute", "memory.recompute", AxisStage::Load,
       "activation recomputation: none, selective, full, or a memory.recompute mapping",
       recompute_defaults, always, recompute_label, true},
      {"sp", "parallelism.sp", AxisStage::Load, "sequence parallelism (with tp > 1)", sp_defaults,
       tensor_parallel, sp_label},
      {"bucket", "data_parallel.bucket", AxisStage::Bucket,
       "gradient bucket of DDP's end-of-step sync (zero 0)", bucket_defaults, bucketed,
       bucket_label},
      {"schedules", "schedules", AxisStage::Schedule,
       "pipeline schedules (names or {name, params}); one pipeline stage runs 1f1b only",
       schedule_defaults, pipelined, schedule_entry_label, true},
  };
  return axes;
}

int plan_axis_index(std::string_view name) {
  const auto& axes = plan_axes();
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string schedule_entry_label(const std::string& entry) {
  if (entry.find('{') == std::string::npos) return entry;
  const YAML::Node n = YAML::Load(entry);
  if (!n.IsMap() || !n["name"]) return entry;
  std::string out = n["name"].as<std::string>();
  if (const YAML::Node p = n["params"]; p && p.IsMap() && p.size() > 0) {
    std::vector<std::string> parts;
    for (const auto& kv : p) {
      YAML::Emitter e;
      e << YAML::Flow << kv.second;
      parts.push_back(kv.first.as<std::string>() + "=" + e.c_str());
    }
    out += fmt::format("({})", fmt::join(parts, ","));
  }
  return out;
}

std::string plan_axis_yaml(const PlanAxis& axis, const std::string& value) {
  if (axis.name == "recompute" && value.find('{') == std::string::npos)
    return "{policy: " + value + "}";
  return value;
}

}  // namespace bubblesim
