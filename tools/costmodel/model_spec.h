#pragma once
// What a scenario's `model:` and `cluster.gpu:` describe: a decoder-only transformer and the GPU
// that runs it (docs/models.md). Plain data; the formulas are in layer_work.h, the times in
// op_timing.h, the stage costs in model_costs.h.

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

/// `model:` — a GPT/Llama-style decoder (pre-norm blocks of attention and MLP).
struct TransformerModel {
  std::string preset;  // `model.preset`, "" when none
  std::int64_t layers = 0;
  std::int64_t hidden = 0;            // h
  std::int64_t heads = 0;             // a
  std::int64_t kv_heads = 0;          // GQA / MQA; 0 = heads
  std::int64_t ffn_hidden = 0;        // f; 0 = 4h
  std::int64_t seq_len = 0;           // s
  std::int64_t micro_batch_size = 1;  // b
  std::int64_t vocab = 0;             // V; 0 = no embedding, no LM head
  MlpKind mlp = MlpKind::Gelu;
  AttentionKind attention = AttentionKind::Flash;
  bool tied_embeddings = false;  // the LM head reuses the word embedding (GPT: true; Llama: false)
  bool tied_embeddings_given = false;  // `tied_embeddings` was in the scenario (not a default)
  SourceLocation where;  // `tied_embeddings` when given, else `model:` (for resolve's errors)
  bool bias = true;      // linear biases and LayerNorm shifts (GPT); Llama: none (RMSNorm)
  bool dropout = true;   // dropout masks kept for backward (GPT); Llama trains without
  std::int64_t dtype_bytes = 2;  // bf16/fp16 = 2, fp32 = 4, fp8 = 1
  std::string dtype = "bf16";
  /// `model.layers_per_stage`: p counts summing to `layers`; empty = Megatron's split.
  std::vector<std::int64_t> layers_per_stage;
  /// `model.layers_per_chunk`: p x v counts in virtual-stage (model) order, 0 allowed; empty =
  /// split each v-chunk table like Megatron's interleaving.
  std::vector<std::int64_t> layers_per_chunk;
  // Issue 17 adds `std::optional<MoeSpec> moe` here; transformer_layer_work() is where a MoE
  // layer's router, expert GEMMs and all-to-all volumes join the dense ones.

  std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  std::int64_t ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  std::int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
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
  double gemm_overhead_s = 6.5e-6;
  double attention_forward = 0.6;  // FlashAttention kernels: fraction of peak on their FLOPs
  double attention_backward = 0.5;
  double memory = 0.8;  // elementwise / normalisation / loss: fraction of HBM bandwidth reached
  std::string source;   // where the curve's numbers come from (preset or `calibrate`)
  bool explicit_given = false;  // `cluster.gpu.efficiency` was in the scenario (or its preset)
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
  /// The one-number efficiency, or the roofline curve's ceiling for large GEMMs (for closed
  /// forms that need one achieved FLOP rate, such as PipeOffload's k).
  double nominal_efficiency() const {
    return efficiency.kind == EfficiencyModel::Kind::Constant ? efficiency.constant
                                                              : efficiency.gemm_max;
  }
};

}  // namespace bubblesim
