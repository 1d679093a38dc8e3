#include "sim/scenario/sections/parallelism_section.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sim/costmodel/layer_work.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/data_parallel_section.h"

namespace bubblesim {

namespace {

/// Why `parallelism.cp: cp` cannot be modelled for this scenario, or "".
std::string context_parallel_error(const Scenario& sc, std::int64_t cp) {
  if (cp <= 1) return "";
  if (!sc.model) return "context parallelism splits every sequence over cp GPUs: it needs 'model:'";
  const TransformerModel& m = *sc.model;
  if (m.attention.kind != AttentionKind::Flash)
    return "context parallelism runs ring attention on fused attention kernels (Megatron-Core "
           "needs Transformer Engine's): it needs model.attention: flash";
  if (m.attention.mla)
    return "context parallelism with multi-head latent attention (model.mla) is not modelled";
  if (m.moe)
    return "context parallelism with MoE layers (model.moe) is not modelled: the experts' "
           "gradient groups would span the cp ranks";
  if (m.seq_len % (2 * cp) != 0)
    return fmt::format(
        "the causal load balancing cuts every sequence into 2 cp = {} chunks: cp {} needs a "
        "model.seq_len divisible by {}, got {}",
        2 * cp, cp, 2 * cp, m.seq_len);
  return "";
}

/// `overlap.tp_comm_sms`: the SMs the overlapped TP collectives' kernels reserve from the GEMMs
/// beside them; it needs tp_comm_overlap (else nothing is overlapped) and a GPU whose SM count
/// is known (a preset's `sms`), and must leave the GEMMs at least one SM.
void read_tp_comm_sms(const YamlNode& n, Scenario& sc, DiagnosticList& diags) {
  const std::int64_t gpu_sms = sc.gpu ? sc.gpu->measured.sms : 0;
  auto v = n.as_integer(diags, 0, 1 << 20);
  if (!v) return;
  if (!sc.parallelism.overlap.tp_comm) {
    n.error(diags,
            "the SMs the overlapped TP collectives reserve: it needs parallelism.tp_comm_overlap: "
            "true (without it nothing runs beside the GEMMs)");
  } else if (*v > 0 && gpu_sms <= 0) {
    n.error(diags,
            "the SMs the overlapped TP collectives reserve need the GPU's SM count, which only a "
            "preset gives (cluster.gpu.preset, scenarios/presets/gpus.yaml); allowed without "
            "one: 0");
  } else if (gpu_sms > 0 && *v >= gpu_sms) {
    n.error(diags, fmt::format("{} SMs would leave the GEMMs none: the {} preset's GPU has {} "
                               "(allowed: 0 to {})",
                               *v, sc.gpu->preset, gpu_sms, gpu_sms - 1));
  } else {
    sc.parallelism.overlap.tp_comm_sms = static_cast<std::int32_t>(*v);
  }
}

}  // namespace

void read_parallelism_section(LoadContext& context, Scenario& sc) {
  const std::optional<YamlNode> parallelism = context.section("parallelism");
  const std::optional<YamlNode> data_parallel = context.section("data_parallel");
  const std::optional<YamlNode> overlap = context.section("overlap");
  ParallelismSpec& spec = sc.parallelism;
  DiagnosticList& diags = context.diags();
  if (parallelism) {
    spec.enabled = true;
    spec.where = parallelism->location();
    MapReader m(*parallelism, diags,
                {"dp", "tp", "cp", "order", "sp", "sp_wgrad_input", "tp_comm_overlap", "zero",
                 "zero_overlap", "ep", "a2a_overlap"});
    if (parallelism->is_map()) {
      if (auto v = m.integer("dp", 1, 65536)) spec.dp = static_cast<std::int32_t>(*v);
      if (auto v = m.integer("tp", 1, 1024)) {
        spec.tp = static_cast<std::int32_t>(*v);
        const std::string shape = sc.model ? model_shape_error(*sc.model, spec.tp) : "";
        if (!shape.empty()) m.get("tp")->error(diags, shape);
      }
      if (auto n = m.get("cp")) {
        if (auto v = n->as_integer(diags, 1, 1024)) {
          const std::string wrong = context_parallel_error(sc, *v);
          if (!wrong.empty())
            n->error(diags, wrong);
          else
            spec.cp = static_cast<std::int32_t>(*v);
        }
      }
      // Sequence parallelism changes the TP collectives and the activations of a transformer.
      if (auto n = m.get("sp")) {
        if (auto v = n->as_boolean(diags)) {
          if (*v && spec.tp <= 1) {
            n->error(diags,
                     "sequence parallelism splits the tensor-parallel group's work: it "
                     "needs tp > 1");
          } else if (*v && !sc.model) {
            n->error(diags,
                     "sequence parallelism changes the transformer's collectives and "
                     "activations: it needs 'model:'");
          } else {
            spec.sp = *v;
          }
        }
      }
      if (auto n = m.get("tp_comm_overlap")) {
        if (auto v = n->as_boolean(diags)) {
          // Transformer Engine overlaps the all-gathers and reduce-scatters of sequence
          // parallelism with the GEMMs beside them; plain TP all-reduces it does not.
          if (*v && !spec.sp) {
            n->error(diags,
                     "tp_comm_overlap pipelines sequence parallelism's all-gathers and "
                     "reduce-scatters with the GEMMs beside them (Transformer Engine's "
                     "userbuffers): it needs sp: true");
          } else {
            spec.overlap.tp_comm = *v;
          }
        }
      }
      // What a split backward keeps of the gathered column-parallel inputs for W under SP.
      if (auto v = m.choice("sp_wgrad_input", {"regather", "keep"})) {
        if (!spec.sp) {
          m.get("sp_wgrad_input")
              ->error(diags,
                      "sp_wgrad_input says how W gets the inputs sequence parallelism gathers: it "
                      "needs sp: true");
        } else {
          spec.sp_wgrad_input = *v == "keep" ? SpWgradInput::Keep : SpWgradInput::Regather;
        }
      }
      if (auto n = m.get("zero")) {
        spec.zero.where = n->location();
        if (auto v = n->as_integer(diags, 0, 3)) {
          // The dp replicas and their cp ranks hold the same parameters: ZeRO shards over all of
          // them (Megatron-Core's data-parallel group with context parallelism; torchtitan's
          // FSDP mesh over dp_shard x cp).
          if (*v > 0 && spec.gradient_group() <= 1) {
            n->error(diags, fmt::format("ZeRO level {} shards across the data-parallel and "
                                        "context-parallel ranks: it needs dp x cp > 1",
                                        *v));
          } else {
            spec.zero.level = static_cast<std::int32_t>(*v);
          }
        }
      }
      if (auto n = m.get("zero_overlap")) {
        if (auto v = n->as_boolean(diags)) {
          if (spec.zero.level < 2) {
            n->error(diags, fmt::format("zero_overlap overlaps the collectives ZeRO levels 2 and "
                                        "3 run inside every op: it needs zero: 2 or 3 (zero is "
                                        "{})",
                                        spec.zero.level));
          } else {
            spec.zero.overlap = *v;
            spec.zero.overlap_given = true;
            spec.zero.overlap_where = n->location();
          }
        }
      }
      if (auto n = m.get("ep")) {
        if (auto v = n->as_integer(diags, 1, 65536)) {
          const MoeSpec* moe = sc.model && sc.model->moe ? &*sc.model->moe : nullptr;
          if (*v > 1 && !moe) {
            n->error(diags, "expert parallelism splits the experts of model.moe: it needs them");
          } else if (*v > 1 && moe->experts % *v != 0) {
            n->error(diags,
                     fmt::format("ep {} must divide the {} routed experts", *v, moe->experts));
          } else if (*v > 1 && spec.cp > 1) {
            n->error(diags,
                     "expert parallelism with context parallelism (parallelism.cp) is not "
                     "modelled: the expert all-to-all would span the cp ranks too");
          } else if (spec.dp % *v != 0) {
            n->error(diags, fmt::format("the expert-parallel group spans data-parallel ranks: ep "
                                        "{} must divide dp {}",
                                        *v, spec.dp));
          } else {
            spec.ep = static_cast<std::int32_t>(*v);
          }
        }
      }
      if (auto n = m.get("a2a_overlap")) {
        if (auto v = n->as_boolean(diags)) {
          // As overlap.comm_sm_fraction: without expert parallelism there is no all-to-all.
          if (*v && spec.ep <= 1) {
            n->error(diags,
                     "F and B hide each other's expert all-to-all: it needs parallelism.ep > 1 "
                     "(without expert parallelism there is no all-to-all to overlap)");
          } else {
            spec.overlap.a2a = *v;
          }
        }
      }
      if (auto order = m.get("order")) {
        std::vector<std::string> dims;
        bool ok = order->is_sequence();
        if (!ok)
          order->error(diags,
                       fmt::format("expected a list of tp, pp and dp, got {}", order->describe()));
        for (const YamlNode& e : ok ? order->elements() : std::vector<YamlNode>{}) {
          if (auto c = e.as_choice(diags, {"tp", "cp", "pp", "dp", "ep"}))
            dims.push_back(*c);
          else
            ok = false;
        }
        if (ok) {
          // `ep` (optional) places the expert-parallel part of the dp ranks (docs/moe.md).
          std::vector<std::string> sorted = dims;
          std::sort(sorted.begin(), sorted.end());
          const auto eps = std::count(sorted.begin(), sorted.end(), "ep");
          const auto cps = std::count(sorted.begin(), sorted.end(), "cp");
          sorted.erase(std::remove(sorted.begin(), sorted.end(), "ep"), sorted.end());
          sorted.erase(std::remove(sorted.begin(), sorted.end(), "cp"), sorted.end());
          if (sorted != std::vector<std::string>{"dp", "pp", "tp"} || eps > 1 || cps > 1) {
            order->error(diags,
                         fmt::format("order must list tp, pp and dp once each and ep and cp at "
                                     "most once (innermost first), got [{}]",
                                     fmt::join(dims, ", ")));
          } else if (eps == 1 && spec.ep <= 1) {
            order->error(
                diags, "order places the expert-parallel ranks (ep): it needs parallelism.ep > 1");
          } else if (cps == 1 && spec.cp <= 1) {
            order->error(
                diags, "order places the context-parallel ranks (cp): it needs parallelism.cp > 1");
          } else if (cps == 0 && spec.cp > 1) {
            order->error(diags,
                         fmt::format("parallelism.cp is {}: order must place cp too (innermost "
                                     "first; Megatron-Core's default is [tp, cp, dp, pp])",
                                     spec.cp));
          } else {
            spec.order = dims;
          }
        }
      } else if (spec.cp > 1) {
        // Megatron-Core's order (tp, cp, ep, dp, pp innermost first) keeps a CP ring inside a
        // node where TP leaves room; here cp goes next to tp in the default order.
        spec.order.insert(spec.order.begin() + 1, "cp");
      }
    }
  }
  read_data_parallel(context, sc, data_parallel);
  // One GPU holding every routed expert computes every token copy whatever the routing: an
  // imbalance between GPUs needs the experts split over expert-parallel ranks.
  if (sc.model && sc.model->moe && sc.model->moe->imbalance != 1.0 &&
      sc.model->moe->capacity_factor <= 0 && spec.ep <= 1) {
    const MoeSpec& moe = *sc.model->moe;
    diags.add(moe.imbalance_where, "model.moe.imbalance",
              fmt::format("{} is the hottest GPU's routed-expert load over the mean, but with "
                          "parallelism.ep 1 every GPU holds all {} experts and computes all of "
                          "its tokens' expert copies whatever the routing: it needs "
                          "parallelism.ep > 1 (allowed without it: 1)",
                          moe.imbalance, moe.experts));
  }
  if (overlap) {
    MapReader m(*overlap, diags, {"comm_sm_fraction", "tp_comm_sms"});
    if (auto n = overlap->is_map() ? m.get("comm_sm_fraction") : std::nullopt) {
      if (auto v = n->as_real(diags, 0.0, 0.9)) {
        const DataParallelSemantics& dps = spec.data_parallel.semantics;
        const bool zero_hidden =
            spec.gradient_group() > 1 && dps.prefetch &&
            (dps.per_microbatch.gather_forward || dps.per_microbatch.reduce_scatter);
        const bool buckets_hidden =
            spec.gradient_group() > 1 && dps.end.runs && spec.data_parallel.overlap;
        if (*v > 0 && spec.ep <= 1 && !zero_hidden && !buckets_hidden) {
          n->error(diags,
                   "the share of SMs an overlapped collective's kernels hold: it needs one that "
                   "hides under compute, the expert all-to-all (parallelism.ep > 1), ZeRO's "
                   "per-layer collectives (parallelism.zero: 2 or 3 with zero_overlap) or the "
                   "gradient buckets (parallelism.dp > 1 with data_parallel.overlap)");
        } else {
          spec.overlap.comm_sm_fraction = *v;
        }
      }
    }
    if (auto n = overlap->is_map() ? m.get("tp_comm_sms") : std::nullopt) {
      read_tp_comm_sms(*n, sc, diags);
    }
  }
}

}  // namespace bubblesim
