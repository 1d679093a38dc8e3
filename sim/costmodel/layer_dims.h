#pragma once
// Internal to the cost model: the per-GPU sizes every work formula uses (layer_work.cpp,
// moe_work.cpp), and the MLP block both the dense layer and the experts are built from.

#include "sim/costmodel/layer_work.h"

namespace bubblesim {

/// What one of the t tensor-parallel ranks holds of the split dimensions.
struct RankShare {
  double heads;     // a / t
  double kv;        // kv / t, at least 1 (KV heads are replicated when kv < t)
  double ffn;       // f / t
  double up_width;  // 1 (GeLU) or 2 (SwiGLU: gate and up) x f / t
};

/// The replicated region (norms, dropout, residual adds): every rank holds its rows, a 1/t share
/// of the sequence under sequence parallelism.
struct ReplicatedRegion {
  double tokens;        // T / t with sequence parallelism, else T
  double hidden_bytes;  // H = tokens h e: one hidden-size tensor of the region
  double mask_bytes;    // one byte per element of H: a dropout mask (0 without dropout)
};

/// The sizes every formula uses, per GPU.
struct Dims {
  double b, s, h, a, kv, d, f, v, e;  // e: bytes of one activation element
  double t;
  double cp;  // context-parallel ranks the sequence is split over
  /// s / cp: the query rows of this GPU's attention (its share of the sequence).
  double q_len() const { return s / cp; }
  /// T = b s / cp: rows of every GEMM (the GPU's share, gathered under SP).
  double tokens() const { return b * q_len(); }
  RankShare rank;
  ReplicatedRegion replicated;
  /// Rows of a column-parallel GEMM's input kept from B until W: T without SP; under SP T / t
  /// (the shard, re-gathered in W) or T (kept gathered), by Sharding::sp_wgrad_input.
  double wgrad_input_tokens;
  bool dropout;
};

Dims dims_of(const TransformerModel& m, const Sharding& sh);

/// One MLP (the dense layer's, the shared experts', or a GPU's routed experts) on one GPU.
struct MlpBlock {
  const char* name;          // GEMM name prefix: "mlp", "shared_expert", "expert"
  double rows = 0;           // tokens each of its GEMMs processes
  double groups = 1;         // GEMMs of that size (a GPU's local experts: a grouped GEMM)
  double width = 0;          // ffn columns of one group on this GPU
  bool keeps_input = false;  // its input is not the layer's normed hidden state (dispatched tokens)
  bool input_counted = false;  // the normed hidden state it reads is already kept for W (router)
  double parameters = 0, parameters_per_gpu = 0, parameters_activated = 0;
};

/// Adds the block's GEMMs (up: 1 or 2 x width for GeLU / SwiGLU, down), its activation function,
/// the activations and weight-gradient inputs it keeps, and its parameters to `c`.
void add_mlp(ComponentWork& c, const TransformerModel& m, const Dims& x, const MlpBlock& block);

/// Parameters of an MLP of `width` columns: the 2 or 3 matrices and, with biases, theirs.
double mlp_parameters(const TransformerModel& m, double width);

/// The MoE layer's MLP part: router, shared experts, this GPU's routed experts, the all-to-all
/// volume (moe_work.cpp).
void add_moe_mlp(ComponentWork& c, const TransformerModel& m, const Sharding& sh, const Dims& x);

/// The attention part of a multi-head latent attention layer (moe_work.cpp).
void add_mla_attention(ComponentWork& c, const TransformerModel& m, const Dims& x);

}  // namespace bubblesim
