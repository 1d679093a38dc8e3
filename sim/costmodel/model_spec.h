#pragma once
// What a scenario's `model:` and `cluster.gpu:` describe: a decoder-only transformer and the GPU
// that runs it (docs/models.md). Plain data; the formulas are in layer_work.h, the times in
// op_timing.h, the stage costs in model_costs.h.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/diagnostics.h"
#include "sim/units/rates.h"

namespace bubblesim {

enum class MlpKind { Gelu, Swiglu };  // gelu: 2 weight matrices; swiglu: 3 (gate, up, down)
enum class AttentionKind { Flash, Standard };  // flash keeps no s x s score tensors
/// How the loss runs over the logits: Megatron's default unfused passes on an fp32 copy
/// (`logits.float()`), the same passes in the model's dtype (`--fp16-lm-cross-entropy`), or one
/// fused kernel that writes the gradient in the forward (`--cross-entropy-loss-fusion`, Liger).
enum class CrossEntropyKind { Fp32, Half, Fused };
inline const char* cross_entropy_name(CrossEntropyKind k) {
  return k == CrossEntropyKind::Fused ? "fused" : k == CrossEntropyKind::Half ? "half" : "fp32";
}
/// `model.activation_fusion`: which passes of the MLP activation (Megatron's TorchScript bias-GeLU
/// or SwiGLU functions) run as one fused kernel; an unfused pass runs one kernel per operation of
/// the function, each reading its inputs from and writing its output to HBM (layer_work.cpp).
enum class ActivationFusion { Fused, ForwardUnfused, Unfused };
inline const char* activation_fusion_name(ActivationFusion f) {
  return f == ActivationFusion::Unfused          ? "unfused"
         : f == ActivationFusion::ForwardUnfused ? "forward_unfused"
                                                 : "fused";
}
/// `model.bias_grad`: the pass that sums output gradients into the linear layers' bias gradients
/// (the zero-bubble implementation does it in B; deferring it with the weight GEMMs puts it in W).
enum class BiasGradPass { BackwardInput, BackwardWeight };

/// `model.moe:` — mixture-of-experts MLPs (docs/moe.md). Every layer from `dense_layers` on
/// replaces its MLP with a router, `experts` routed experts of which each token uses `top_k`, and
/// `shared_experts` experts every token uses; each expert is an MLP of `expert_ffn_hidden`.
struct MoeSpec {
  std::int64_t experts = 0;
  std::int64_t top_k = 1;
  std::int64_t expert_ffn_hidden = 0;  // 0 = the model's ffn_hidden
  std::int64_t shared_experts = 0;
  std::int64_t dense_layers = 0;  // the first k layers keep the dense MLP
  /// > 0: every expert computes capacity_factor x its mean load (GShard/Switch padding; tokens
  /// beyond it are dropped); 0 = dropless (DeepSeek, Mixtral): each expert computes its tokens.
  double capacity_factor = 0;
  /// Hottest expert's load over the mean (1 = uniform routing): the expert MLP phase of a GPU
  /// lasts as long as its most loaded expert's (capped at capacity_factor when one is given).
  double imbalance = 1.0;
  SourceLocation imbalance_where;  // where `imbalance` was given (for the check against ep)
  /// DeepSeek-V3's node-limited routing: a token goes to experts on at most this many nodes and
  /// crosses the network once per node (0 = no limit: one copy per routed expert).
  std::int64_t max_nodes = 0;
  /// How the routed token copies get into expert order and back (`model.moe.permute`): true =
  /// separate gather passes around the all-to-all (Megatron's alltoall dispatcher), false = the
  /// dispatch and combine kernels place them (no pass of their own).
  bool permute_copies = true;
};

/// `model.mla:` — DeepSeek's multi-head latent attention (docs/moe.md): low-rank query and
/// key/value projections; heads of qk_nope + qk_rope dimensions for Q and K, v_head for V.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;  // 0 = a full-rank query projection (DeepSeek-V2-Lite)
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

/// The attention block of `model:`: its heads, the kernel that runs it, and optionally DeepSeek's
/// latent projections instead of multi-head (or grouped-query) ones.
struct AttentionSpec {
  std::int64_t heads = 0;                     // `heads`, a
  std::int64_t kv_heads = 0;                  // `kv_heads` (GQA / MQA); 0 = heads
  AttentionKind kind = AttentionKind::Flash;  // `attention`
  std::optional<MlaSpec> mla;  // `mla`; none = multi-head (or grouped-query) attention
};

/// The dense MLP of `model:` (every layer's without `moe`, the first `moe.dense_layers` with it).
struct MlpSpec {
  std::int64_t ffn_hidden = 0;   // `ffn_hidden`, f; 0 = 4h
  MlpKind kind = MlpKind::Gelu;  // `mlp`
};

/// Which kernels run the model's passes: choices of the implementation (Megatron's flags) that
/// change time, memory traffic or which pass does the work, not the model's FLOPs.
struct KernelOptions {
  CrossEntropyKind cross_entropy = CrossEntropyKind::Fp32;       // `cross_entropy`
  ActivationFusion activation_fusion = ActivationFusion::Fused;  // `activation_fusion`
  /// `bias_grad`: the pass that sums output gradients into the linear layers' bias gradients.
  BiasGradPass bias_grad = BiasGradPass::BackwardInput;
  /// `glue_kernels`: `attention: standard` runs Megatron's unfused core attention's copy and
  /// scaling kernels between its GEMMs (QKV bias add, context permute, their gradients).
  bool glue_kernels = true;
  /// `framework`: the framework preset these options came from ("" when none;
  /// scenarios/presets/frameworks.yaml). The scenario's own `model:` keys override its values.
  std::string framework;
  /// `framework.host_launch`: the host's time to issue one kernel. A component's pass (a layer's
  /// F, B or W) takes at least its kernel launches x this; 0 = no bound (docs/models.md).
  double host_launch_s = 0;
};

/// The word embedding and the LM head of `model:`.
struct EmbeddingSpec {
  std::int64_t vocab = 0;   // `vocab`, V; 0 = no embedding, no LM head
  bool tied = false;        // `tied_embeddings`: the LM head reuses the word embedding (GPT: true)
  bool tied_given = false;  // `tied_embeddings` was in the scenario (not a default)
  SourceLocation where;     // `tied_embeddings` when given, else `model:` (for resolve's errors)
  /// `mtp_depth`: DeepSeek-V3's multi-token prediction modules, D (0 = none). They share the
  /// embedding and the LM head (so need a vocabulary) and run on the head's stage: each adds a
  /// projection, one transformer block and a second head pass and loss (mtp_work.h).
  std::int64_t mtp_depth = 0;
};

/// `model.dtype`: the number format of weights and activations.
struct DType {
  std::string name = "bf16";
  std::int64_t bytes = 2;  // bf16/fp16 = 2, fp32 = 4, fp8 = 1
};

/// How `model:`'s layers are split over the pipeline (empty lists = Megatron's split).
struct LayerSplit {
  /// `layers_per_stage`: p counts summing to `layers`.
  std::vector<std::int64_t> per_stage;
  /// `layers_per_stage: balanced`: whole layers placed so that the largest stage's (or virtual
  /// stage's) F + B + W, embedding, LM head, loss and MTP included, is as small as whole layers
  /// allow (model_costs.cpp: balanced_layers).
  bool balanced = false;
  /// `layers_per_chunk`: p x v counts in virtual-stage (model) order, 0 allowed; empty = split
  /// each v-chunk table like Megatron's interleaving.
  std::vector<std::int64_t> per_chunk;
  /// `layers_per_stage: {first, last, embedding_as_layer, loss_as_layer}`: Megatron-Core's uneven
  /// split (`--decoder-first-pipeline-num-layers`, `--decoder-last-pipeline-num-layers`,
  /// `account_for_embedding_in_pipeline_split`, `account_for_loss_in_pipeline_split`),
  /// resolved against the stage count by stage_layers.
  struct Megatron {
    std::optional<std::int64_t> first, last;
    bool embedding_as_layer = false, loss_as_layer = false;
  };
  std::optional<Megatron> megatron;
  /// Layers are given per stage (a list or Megatron-Core's keys), not placed evenly or balanced.
  bool counts_given() const { return !per_stage.empty() || megatron.has_value(); }
};

/// `model:` — a GPT/Llama-style decoder (pre-norm blocks of attention and MLP).
struct TransformerModel {
  std::string preset;  // `model.preset`, "" when none
  std::int64_t layers = 0;
  std::int64_t hidden = 0;            // h
  std::int64_t seq_len = 0;           // s
  std::int64_t micro_batch_size = 1;  // b
  AttentionSpec attention;
  MlpSpec mlp;
  std::optional<MoeSpec> moe;  // `model.moe`; none = every layer dense
  EmbeddingSpec embedding;
  KernelOptions kernels;
  bool bias = true;     // linear biases and LayerNorm shifts (GPT); Llama: none (RMSNorm)
  bool dropout = true;  // dropout masks kept for backward (GPT); Llama trains without
  DType dtype;
  /// `model.fp8_linear`: the linear layers' GEMMs (GemmWork::linear) run at the GPU's FP8 peak
  /// with 1-byte operands; everything else stays in `dtype` (docs/models.md).
  bool fp8_linear = false;
  LayerSplit split;

  std::int64_t kv() const { return attention.kv_heads > 0 ? attention.kv_heads : attention.heads; }
  std::int64_t ffn() const { return mlp.ffn_hidden > 0 ? mlp.ffn_hidden : 4 * hidden; }
  std::int64_t head_dim() const { return attention.heads > 0 ? hidden / attention.heads : 0; }
  /// Layers whose MLP is a mixture of experts (0 without `moe`).
  std::int64_t moe_layers() const {
    return moe ? std::max<std::int64_t>(0, layers - moe->dense_layers) : 0;
  }
  /// Whether layer `i` (0-based) is a MoE layer.
  bool is_moe_layer(std::int64_t i) const { return moe && i >= moe->dense_layers; }
};

/// How FLOPs become time (`cluster.gpu.efficiency`): one fraction of peak for every FLOP (the
/// published formula), or the roofline model of op_timing.h.
struct EfficiencyModel {
  enum class Kind { Constant, Roofline };
  Kind kind = Kind::Constant;
  double constant = 1.0;  // Constant: time = FLOPs / (peak x constant); memory-bound work free
  // Roofline: a GEMM of F FLOPs takes gemm_overhead + F / (peak x gemm_max), never less than its
  // operand traffic at the memory bandwidth x memory.
  double gemm_max = 0.8;
  // The ceiling of GEMMs with FP8 (1-byte) operands, as a fraction of the FP8 peak
  // (`model.fp8_linear`, `dtype: fp8`); 0 = gemm_max.
  double gemm_max_fp8 = 0;
  double gemm_overhead_s = 6.5e-6;
  double attention_forward = 0.6;  // FlashAttention kernels: fraction of peak on their FLOPs
  double attention_backward = 0.5;
  double memory = 0.8;  // elementwise / normalisation / loss: fraction of HBM bandwidth reached
  std::string source;   // where the curve's numbers come from (preset or `calibrate`)
  bool explicit_given = false;  // `cluster.gpu.efficiency` was in the scenario (or its preset)
};

/// `cluster.gpu.first_principles` (docs/first-principles.md): what an op and a collective cost
/// beyond the roofline, each a switch (all off unless given), with its numbers from the GPU preset.
struct FirstPrinciples {
  bool nccl = false;             // TP collectives at NCCL's achieved bus bandwidth and latency
  bool sustained_clock = false;  // compute at the clock the chip holds at its power cap
  bool gemm_waves = false;       // GEMMs in whole waves of output tiles over the SMs
  bool optimizer_step = false;   // the framework's optimizer step, bytes per parameter at HBM rate
  bool slowest_gpu = false;      // compute at the pace of the slowest of the job's GPUs
  /// NCCL's tuning model: each collective's algorithm (data_parallel.algorithm: auto), latency
  /// and bandwidth as NCCL predicts them (docs/first-principles.md, `nccl_tuning`).
  bool nccl_tuning = false;
  bool any() const {
    return nccl || sustained_clock || gemm_waves || optimizer_step || slowest_gpu || nccl_tuning;
  }
};

/// The preset's numbers for FirstPrinciples (scenarios/presets/gpus.yaml cites each).
struct GpuMeasured {
  /// `nccl.nvlink_busbw`: the ring bus bandwidth nccl-tests reach between the GPUs of one node
  /// (large messages); `nccl.base_latency` and `nccl.step_latency`: NCCL's own tuning model's
  /// latency of a ring collective (src/graph/tuning.cc: base + steps x per-step).
  double nvlink_busbw = 0;  // bytes/s, 0 = not known
  /// `nccl.nvls_busbw`: an all-reduce of more than 4 GPUs of one node on NVLink SHARP (NVLS,
  /// Hopper on), which NCCL picks there by default; 0 = the ring's.
  double nvls_busbw = 0;
  double nccl_base_latency_s = 0, nccl_step_latency_s = 0;
  /// `nccl.net_efficiency`: the share of a NIC's line rate NCCL's traffic between nodes reaches
  /// (an all-reduce's bus bandwidth per NIC over its line rate); 0 = not known (the line rate).
  double net_efficiency = 0;
  /// `sustained_clock`: the GEMM rate a chip holds under continuous load at its power cap, as a
  /// fraction of the efficiency curve's ceiling (0 = not known).
  double sustained_clock = 0;
  /// `sms` and `gemm_tile`: the streaming multiprocessors and the output tile (rows x columns)
  /// of the library's large GEMM kernels, for wave quantization (0 = not known).
  std::int64_t sms = 0, tile_m = 0, tile_n = 0;
  /// `chip_spread`: the coefficient of variation of the sustained GEMM rate between chips of
  /// this model (0 = not known), for the slowest GPU of a synchronous job.
  double chip_spread = 0;
  /// `compute_capability` (x 10: 80 for 8.0): the generation NCCL's tuning tables are indexed
  /// by (0 = not known).
  std::int32_t compute_capability = 0;
};

/// `cluster.gpu:` — the GPU that runs every stage (a preset and/or explicit values).
struct GpuSpec {
  std::string preset;                         // `cluster.gpu.preset`, "" when none
  FlopRate flops;                             // peak dense FLOP/s in the model's dtype
  FlopRate flops_fp8;                         // peak dense FP8 (0 = unknown)
  std::optional<Bytes> memory;                // HBM capacity
  std::optional<Bandwidth> memory_bandwidth;  // HBM bandwidth
  std::optional<Bandwidth> nvlink_bandwidth;  // per GPU, one direction
  EfficiencyModel efficiency;
  FirstPrinciples mechanisms;  // `first_principles`
  GpuMeasured measured;        // the preset's numbers for them
  /// The one-number efficiency, or the roofline curve's ceiling for large GEMMs (for closed
  /// forms that need one achieved FLOP rate, such as PipeOffload's k).
  double nominal_efficiency() const {
    return efficiency.kind == EfficiencyModel::Kind::Constant ? efficiency.constant
                                                              : efficiency.gemm_max;
  }
};

}  // namespace bubblesim
