#include "sim/scenario/sections/cost_form_section.h"

#include <fmt/format.h>

#include <string>

#include "sim/scenario/scenario.h"

namespace bubblesim {
namespace {

/// The node of `path` (dotted, under a top-level section) when the scenario wrote it, else none.
std::optional<YamlNode> written(LoadContext& context, const std::string& section,
                                std::initializer_list<const char*> path) {
  std::optional<YamlNode> node = context.section(section);
  for (const char* key : path) {
    if (!node || !node->is_map() || !node->raw()[key]) return std::nullopt;
    node = node->child(key);
  }
  return node;
}

/// Which given costs leave the model no layer time to derive, as the key a user reads; "" when
/// the model times some layer op.
std::string given_layer_times(const Scenario& sc) {
  if (sc.costs.per_layer) return "costs.per_layer";
  const CostFields& g = sc.costs.given;
  if (!(g.forward && g.backward_input && g.backward_weight)) return "";
  return sc.costs.source == "profile" ? "costs.profile"
                                      : "costs.forward, backward_input and backward_weight";
}

class Disengage {
 public:
  Disengage(LoadContext& context, Scenario& sc) : context_(context), sc_(sc) {}

  /// A mechanism at `key` that is on but cannot act because `why`: refused at `named` when the
  /// scenario wrote it as true, else switched off (`off`) and listed with the reason.
  template <typename Off>
  void apply(const std::optional<YamlNode>& named, const std::string& key, const std::string& why,
             Off off) {
    if (named && named->is_scalar() && named->describe() != "false") {
      named->error(context_.diags(),
                   fmt::format("does nothing here: {}; drop it (or set it to false)", why));
      return;
    }
    off();
    sc_.costs.not_applied.push_back({key, why});
  }

  /// A key with no effect here: refused at `named` when the scenario wrote it.
  void refuse(const std::optional<YamlNode>& named, const std::string& why) {
    if (named) named->error(context_.diags(), fmt::format("does nothing here: {}", why));
  }

 private:
  LoadContext& context_;
  Scenario& sc_;
};

}  // namespace

void check_cost_form(LoadContext& context, Scenario& sc) {
  if (!sc.model || !sc.gpu) return;
  Disengage disengage(context, sc);
  FirstPrinciples& fp = sc.gpu->mechanisms;
  auto mechanism = [&](const char* name) {
    return written(context, "cluster", {"gpu", "first_principles", name});
  };
  const std::string given = given_layer_times(sc);
  if (!given.empty()) {
    const std::string measured =
        fmt::format("the layer times come from {}, which already carries ", given);
    const struct {
      const char* name;
      bool* on;
      const char* carried;
    } layer_mechanisms[] = {
        {"sustained_clock", &fp.sustained_clock, "the clock the chip ran at"},
        {"gemm_waves", &fp.gemm_waves, "the GEMMs' tile waves"},
        {"slowest_gpu", &fp.slowest_gpu,
         "the chip it was measured on (variability.slowest_of: group draws the slowest of a "
         "group)"},
    };
    for (const auto& m : layer_mechanisms) {
      if (!*m.on) continue;
      disengage.apply(mechanism(m.name), fmt::format("cluster.gpu.first_principles.{}", m.name),
                      measured + m.carried, [&] { *m.on = false; });
    }
    if (sc.model->fp8_linear) {
      disengage.apply(written(context, "model", {"fp8_linear"}), "model.fp8_linear",
                      measured + "the precision its GEMMs ran in",
                      [&] { sc.model->fp8_linear = false; });
    }
    if (sc.model->kernels.host_launch_s > 0) {
      disengage.apply(written(context, "model", {"framework", "host_launch"}),
                      "model.framework.host_launch", measured + "the host's kernel launches",
                      [&] { sc.model->kernels.host_launch_s = 0; });
    }
  }
  // Keys that choose how the model times a layer (its kernels) and nothing else: inert beside given
  // layer times. A framework preset's values for them are simply unused.
  if (!given.empty()) {
    const std::string why =
        fmt::format("the layer times come from {}, so no kernel is timed", given);
    for (const char* key : {"activation_fusion", "bias_grad", "glue_kernels"})
      disengage.refuse(written(context, "model", {key}), why);
    disengage.refuse(written(context, "model", {"moe", "permute"}), why);
  }
  // Every stage's F, B and W given: what only derives them has nothing left to act on.
  const CostFields& g = sc.costs.given;
  if (g.forward && g.backward_input && g.backward_weight) {
    const std::string why = fmt::format("every stage's op times come from {}", given);
    if (!fp.optimizer_step)  // else the optimizer step's kernels run at efficiency.memory
      disengage.refuse(written(context, "cluster", {"gpu", "efficiency"}),
                       why + ", so the efficiency times nothing");
    disengage.refuse(written(context, "parallelism", {"zero_overlap"}),
                     why + ", which hold ZeRO's per-op collectives as they ran");
  }
  // Given stage costs are divided evenly among a stage's chunks (table_costs.h).
  if (sc.costs.given.any()) {
    disengage.refuse(written(context, "model", {"layers_per_chunk"}),
                     "the costs the scenario gives are divided evenly among a stage's chunks, so "
                     "no chunk's layers are timed");
  }
  if (fp.slowest_gpu && sc.variability && sc.variability->gpus_per_device > 1) {
    disengage.apply(mechanism("slowest_gpu"), "cluster.gpu.first_principles.slowest_gpu",
                    "variability.slowest_of: group already runs each device at the pace of the "
                    "slowest of its GPUs, drawn per sample; both would count the slowest chip "
                    "twice",
                    [&] { fp.slowest_gpu = false; });
  }
}

}  // namespace bubblesim
