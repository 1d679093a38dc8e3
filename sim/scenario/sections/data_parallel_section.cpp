#include "sim/scenario/sections/data_parallel_section.h"

#include <fmt/format.h>

#include <stdexcept>

#include "sim/costmodel/presets.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {
namespace {

/// The framework preset's `data_parallel` mapping (scenarios/presets/frameworks.yaml), if the
/// scenario names a framework that gives one.
std::optional<YamlNode> framework_data_parallel(const Scenario& sc) {
  if (!sc.model || sc.model->kernels.framework.empty()) return std::nullopt;
  const std::optional<YamlNode> preset = Presets::builtin().framework(sc.model->kernels.framework);
  if (!preset || !preset->raw()["data_parallel"]) return std::nullopt;
  return preset->child("data_parallel");
}

/// A built-in preset's value (presets_test checks that each parses).
template <typename T>
std::optional<T> preset_value(const YamlNode& preset, const char* key) {
  if (!preset.raw()[key]) return std::nullopt;
  return preset.raw()[key].as<T>();
}

/// The keys the scenario gave, for errors and for keys that must not be silently ignored.
struct GivenKeys {
  std::optional<YamlNode> engine, bucket, overlap, reduce_dtype, fp8, replicate, param_gather;
};

GivenKeys read_keys(const YamlNode& node, DataParallelSpec& dp, DataParallelChoices& c,
                    DiagnosticList& diags) {
  GivenKeys g;
  MapReader m(node, diags,
              {"engine", "bucket", "overlap", "reduce_dtype", "fp8_param_gather", "replicate",
               "overlap_param_gather", "algorithm", "replica_sync", "ring_steps"});
  if (!node.is_map()) return g;
  if ((g.bucket = m.get("bucket"))) {
    if (auto b = g.bucket->as_bytes(diags)) {
      if (b->count() <= 0)
        g.bucket->error(diags, "the bucket must be larger than 0 bytes");
      else
        dp.bucket = *b;
    }
  }
  if ((g.overlap = m.get("overlap")))
    if (auto v = g.overlap->as_boolean(diags)) c.overlap = *v;
  if (m.has("replica_sync"))
    if (auto v = m.boolean("replica_sync")) dp.replica_sync = *v;
  if (m.has("ring_steps"))
    if (auto r = m.choice("ring_steps", {"pipelined", "stepped"}))
      dp.ring_steps = *r == "stepped" ? RingSteps::Stepped : RingSteps::Pipelined;
  if (m.has("algorithm")) {
    if (auto a = m.choice("algorithm", {"ring", "tree", "hierarchical"})) {
      dp.algorithm = *a == "ring"   ? CollectiveAlgorithm::Ring
                     : *a == "tree" ? CollectiveAlgorithm::Tree
                                    : CollectiveAlgorithm::Hierarchical;
    }
  }
  if ((g.engine = m.get("engine"))) {
    if (auto e = g.engine->as_choice(diags, data_parallel_engine_names())) {
      c.engine = *data_parallel_engine_from_name(*e);
      dp.engine_from = "data_parallel.engine";
    }
  }
  if ((g.reduce_dtype = m.get("reduce_dtype")))
    if (auto d = g.reduce_dtype->as_choice(diags, {"fp32", "bf16", "fp16"}))
      c.reduce_bytes = *d == "fp32" ? 4 : 2;
  if ((g.fp8 = m.get("fp8_param_gather")))
    if (auto v = g.fp8->as_boolean(diags)) c.fp8_param_gather = *v;
  if ((g.replicate = m.get("replicate")))
    if (auto v = g.replicate->as_integer(diags, 1, 65536))
      dp.replicate = static_cast<std::int32_t>(*v);
  if ((g.param_gather = m.get("overlap_param_gather")))
    if (auto v = g.param_gather->as_boolean(diags)) c.overlap_param_gather = *v;
  return g;
}

/// The keys that would do nothing (or are not modelled) for the resolved engine.
void check_keys(const GivenKeys& g, const Scenario& sc, const DataParallelSemantics& s,
                DiagnosticList& diags) {
  const ParallelismSpec& par = sc.parallelism;
  const std::string engine(data_parallel_engine_name(s.engine));
  const bool fsdp = s.engine == DataParallelEngine::Fsdp || s.engine == DataParallelEngine::Fsdp2;
  if (g.bucket && (fsdp || (s.engine == DataParallelEngine::Megatron && s.zero >= 2)))
    g.bucket->error(diags, fmt::format("{} (zero {}) moves its gradients unit by unit (each "
                                       "layer), not in buckets: remove bucket",
                                       engine, s.zero));
  if (g.bucket && s.engine == DataParallelEngine::Megatron &&
      s.end.readiness == BucketReadiness::AfterCompute)
    g.bucket->error(diags,
                    "Megatron without overlap reduces every gradient in one collective "
                    "after the backward (bucket_size None without overlap_grad_reduce, "
                    "distributed_data_parallel.py): remove bucket, or overlap: true");
  if (g.overlap && !s.end.runs)
    g.overlap->error(diags,
                     fmt::format("overlap times the end-of-step gradient buckets, which {} (zero "
                                 "{}) does not run: its collectives run inside every microbatch's "
                                 "ops (their overlap is parallelism.zero_overlap)",
                                 engine, s.zero));
  if (g.reduce_dtype && !par.given.gradient_bytes.empty())
    g.reduce_dtype->error(diags,
                          "costs.gradient_bytes already gives the gradients' bytes: give "
                          "one of them");
  if (g.fp8 && s.fp8_param_gather) {
    if (s.engine != DataParallelEngine::Fsdp2 && s.engine != DataParallelEngine::Megatron)
      g.fp8->error(diags, fmt::format("{} gathers parameters in their dtype; FP8 parameter "
                                      "all-gathers are FSDP2's (torchao's "
                                      "enable_fsdp_float8_all_gather) and Megatron-Core's "
                                      "(--fp8-param-gather): engine fsdp2 or megatron",
                                      engine));
    else if (s.gather == ParameterGather::None && !s.per_microbatch.gather_forward)
      g.fp8->error(diags, fmt::format("{} (zero {}) gathers no parameters: FP8 parameter "
                                      "all-gathers need sharded parameters or the distributed "
                                      "optimizer (zero 1 or more)",
                                      engine, s.zero));
    else if (!sc.model || !sc.model->fp8_linear)
      g.fp8->error(diags,
                   "FP8 parameter all-gathers send the FP8 weights the linear layers "
                   "compute with: they need model.fp8_linear: true");
  }
  if (g.param_gather && s.gather != ParameterGather::BehindForward &&
      s.gather != ParameterGather::AfterStep)
    g.param_gather->error(diags, fmt::format("overlap_param_gather moves Megatron's "
                                             "distributed-optimizer all-gather into the next "
                                             "forward: it needs engine megatron with zero 1 or 2 "
                                             "(got {}, zero {})",
                                             engine, s.zero));
  else if (g.param_gather && s.engine != DataParallelEngine::Megatron)
    g.param_gather->error(diags, fmt::format("{} all-gathers the updated parameters after the "
                                             "step: overlap_param_gather is Megatron's",
                                             engine));
  if (g.replicate && par.data_parallel.replicate > 1) {
    const std::int32_t r = par.data_parallel.replicate;
    if (!fsdp)
      g.replicate->error(diags, fmt::format("HSDP (shard inside a group, replicate across) is "
                                            "modelled for FSDP: engine fsdp or fsdp2 (got {})",
                                            engine));
    else if (sc.stages > 1)
      g.replicate->error(diags,
                         "HSDP under pipeline stages is not modelled (FSDP2's end-of-step "
                         "reduce-scatter would need the replicate all-reduce after it)");
    else if (par.dp % r != 0)
      g.replicate->error(diags, fmt::format("replicate {} must divide dp {} (the replicate groups "
                                            "each hold a whole shard group)",
                                            r, par.dp));
  }
}

}  // namespace

void read_data_parallel(LoadContext& context, Scenario& sc, const std::optional<YamlNode>& node) {
  ParallelismSpec& spec = sc.parallelism;
  DataParallelSpec& dp = spec.data_parallel;
  DiagnosticList& diags = context.diags();
  const std::size_t before = diags.size();
  DataParallelChoices c;
  c.engine = default_data_parallel_engine(spec.zero.level);
  c.zero = spec.zero.level;
  c.stages = sc.stages;
  c.dtype_bytes = sc.model ? sc.model->dtype.bytes : 2;
  GivenKeys given;
  if (node) {
    spec.enabled = true;
    if (spec.where.line == 0) spec.where = node->location();
    given = read_keys(*node, dp, c, diags);
  }
  if (const std::optional<YamlNode> fw = framework_data_parallel(sc)) {
    // The framework's engine, unless the scenario names one, and the overlaps its code or
    // recipes set for that engine (frameworks.yaml says which).
    const DataParallelEngine engine =
        *data_parallel_engine_from_name(*preset_value<std::string>(*fw, "engine"));
    if (!given.engine) {
      c.engine = engine;
      dp.engine_from = "model.framework " + sc.model->kernels.framework;
    }
    if (c.engine == engine) {
      if (!c.overlap) c.overlap = preset_value<bool>(*fw, "overlap");
      if (!c.overlap_param_gather && c.zero >= 1 && c.zero <= 2)
        c.overlap_param_gather = preset_value<bool>(*fw, "overlap_param_gather");
    }
  }
  if (diags.size() != before) return;
  try {
    dp.semantics = data_parallel_semantics(c);
  } catch (const std::invalid_argument& e) {
    const SourceLocation where = given.engine               ? given.engine->location()
                                 : spec.zero.where.line > 0 ? spec.zero.where
                                                            : spec.where;
    diags.add(where, given.engine ? "data_parallel.engine" : "parallelism.zero",
              fmt::format("{} (engine from {})", e.what(), dp.engine_from));
    return;
  }
  DataParallelSemantics& s = dp.semantics;
  // DeepSpeed's overlap_comm also overlaps its per-microbatch collectives; a given
  // parallelism.zero_overlap says for itself.
  if (spec.zero.overlap_given || s.engine != DataParallelEngine::DeepSpeed)
    s.prefetch = spec.zero.overlap;
  else
    spec.zero.overlap = s.prefetch;
  dp.overlap = s.end.readiness != BucketReadiness::AfterCompute;
  check_keys(given, sc, s, diags);
  const auto& pm = s.per_microbatch;
  if ((pm.gather_forward || pm.reduce_scatter) && !sc.model && spec.gradient_group() > 1)
    diags.add(spec.zero.where.line > 0 ? spec.zero.where : spec.where, "parallelism.zero",
              fmt::format("{} at zero {} reduces the gradients inside every microbatch's ops, "
                          "unit by unit, which bubblesim times from the model's layers: it needs "
                          "'model:' (with explicit costs, zero 0 or 1)",
                          data_parallel_engine_name(s.engine), s.zero));
  if (spec.zero.overlap_given && !pm.gather_forward && !pm.reduce_scatter)
    diags.add(spec.zero.overlap_where, "parallelism.zero_overlap",
              fmt::format("{} (zero {}) runs no collective inside the microbatches' ops for "
                          "zero_overlap to overlap: {}",
                          data_parallel_engine_name(s.engine), s.zero, describe(s)));
}

}  // namespace bubblesim
