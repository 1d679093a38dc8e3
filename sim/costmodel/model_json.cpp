// The resolved model and GPU as the JSON report writes them (scenario.model, scenario.cluster.gpu):
// every value the cost model used, defaults and preset values filled in. Declared in
// model_reader.h beside the readers that fill these structs.
#include <fmt/format.h>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_reader.h"
#include "sim/costmodel/moe_reader.h"
#include "sim/costmodel/mtp_work.h"
#include "sim/costmodel/presets.h"

namespace bubblesim {

nlohmann::json transformer_model_json(const TransformerModel& m) {
  nlohmann::json j = {
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"heads", m.attention.heads},
      {"kv_heads", m.kv()},
      {"ffn_hidden", m.ffn()},
      {"seq_len", m.seq_len},
      {"micro_batch_size", m.micro_batch_size},
      {"vocab", m.embedding.vocab},
      {"mlp", m.mlp.kind == MlpKind::Swiglu ? "swiglu" : "gelu"},
      {"attention", m.attention.kind == AttentionKind::Flash ? "flash" : "standard"},
      {"cross_entropy", cross_entropy_name(m.kernels.cross_entropy)},
      {"tied_embeddings", m.embedding.tied},
      {"bias", m.bias},
      {"dropout", m.dropout},
      {"activation_fusion", activation_fusion_name(m.kernels.activation_fusion)},
      {"bias_grad",
       m.kernels.bias_grad == BiasGradPass::BackwardWeight ? "backward_weight" : "backward_input"},
      {"glue_kernels", m.kernels.glue_kernels},
      {"dtype", m.dtype.name},
      {"fp8_linear", m.fp8_linear},
      {"parameters", model_parameters(m)},
      {"parameters_activated", model_parameters_activated(m)}};
  if (m.embedding.mtp_depth > 0) {  // absent at depth 0: reports without MTP stay as they were
    j["mtp_depth"] = m.embedding.mtp_depth;
    j["parameters_mtp"] = mtp_parameters(m);
  }
  if (!m.kernels.framework.empty()) {  // absent without one: reports stay as they were
    const ComponentWork layer = transformer_layer_work(m, Sharding{});
    j["framework"] = {{"preset", m.kernels.framework},
                      {"host_launch_s", m.kernels.host_launch_s},
                      {"launches_per_layer",
                       {{"forward", layer.forward.launches()},
                        {"backward_input", layer.backward_input.launches()},
                        {"backward_weight", layer.backward_weight.launches()}}}};
  }
  if (m.moe) j["moe"] = moe_json(*m.moe);
  if (m.attention.mla) j["mla"] = mla_json(*m.attention.mla);
  if (!m.preset.empty()) j["preset"] = m.preset;
  if (!m.split.per_stage.empty()) j["layers_per_stage"] = m.split.per_stage;
  if (m.split.balanced) j["layers_per_stage"] = "balanced";
  if (m.split.megatron) {
    nlohmann::json mg = nlohmann::json::object();
    if (m.split.megatron->first) mg["first"] = *m.split.megatron->first;
    if (m.split.megatron->last) mg["last"] = *m.split.megatron->last;
    if (m.split.megatron->embedding_as_layer) mg["embedding_as_layer"] = true;
    if (m.split.megatron->loss_as_layer) mg["loss_as_layer"] = true;
    j["layers_per_stage"] = mg;
  }
  if (!m.split.per_chunk.empty()) j["layers_per_chunk"] = m.split.per_chunk;
  return j;
}

nlohmann::json gpu_spec_json(const GpuSpec& g) {
  nlohmann::json j = {{"flops", g.flops.flops_per_second()}};
  if (!g.preset.empty()) j["preset"] = g.preset;
  const EfficiencyModel& e = g.efficiency;
  if (e.kind == EfficiencyModel::Kind::Constant) {
    j["efficiency"] = e.constant;
  } else {
    j["efficiency"] = {
        {"gemm_max", e.gemm_max},
        {"gemm_overhead_s", e.gemm_overhead_s},
        {"attention", {{"forward", e.attention_forward}, {"backward", e.attention_backward}}},
        {"memory", e.memory},
        {"source", e.source}};
    if (e.gemm_max_fp8 > 0) j["efficiency"]["gemm_max_fp8"] = e.gemm_max_fp8;
  }
  if (g.memory) j["memory_bytes"] = g.memory->count();
  if (g.memory_bandwidth)
    j["memory_bandwidth_bytes_per_s"] = g.memory_bandwidth->bytes_per_second();
  if (g.flops_fp8.flops_per_second() > 0) j["flops_fp8"] = g.flops_fp8.flops_per_second();
  const FirstPrinciples& fp = g.mechanisms;
  if (fp.any()) {  // absent when off: reports without the mechanisms stay as they were
    nlohmann::json on = nlohmann::json::object();
    if (fp.nccl)
      on["nccl"] = {{"nvlink_busbw_bytes_per_s", g.measured.nvlink_busbw},
                    {"base_latency_s", g.measured.nccl_base_latency_s},
                    {"step_latency_s", g.measured.nccl_step_latency_s}};
    if (fp.nccl && g.measured.net_efficiency > 0)
      on["nccl"]["net_efficiency"] = g.measured.net_efficiency;
    if (fp.sustained_clock) on["sustained_clock"] = g.measured.sustained_clock;
    if (fp.gemm_waves)
      on["gemm_waves"] = {{"sms", g.measured.sms},
                          {"tile", {g.measured.tile_m, g.measured.tile_n}}};
    if (fp.optimizer_step) on["optimizer_step"] = true;
    if (fp.nccl_tuning)
      on["nccl_tuning"] = {{"compute_capability", g.measured.compute_capability / 10.0},
                           {"source", "NVIDIA/nccl 2.30.7 src/graph/tuning.cc, search.cc"}};
    if (fp.slowest_gpu) on["slowest_gpu"] = {{"chip_spread", g.measured.chip_spread}};
    j["first_principles"] = on;
  }
  return j;
}

}  // namespace bubblesim
