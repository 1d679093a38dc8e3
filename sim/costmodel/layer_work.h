#pragma once
// The work of one transformer layer, the input embedding and the LM head + loss on ONE GPU after
// tensor parallelism: the GEMM shapes (M, N, K) of each pass, the attention kernels' FLOPs, the
// memory-bound (elementwise, normalisation, loss) traffic, the activation bytes kept for the
// backward, the bytes kept from B until W, and the parameters. Times are op_timing.h's job.
//
// Passes follow the zero-bubble split: F (forward), B (backward for inputs), W (backward for
// weights: the weight-gradient GEMMs). The formulas, variants and sources are in docs/models.md
// and the README's formula table; the comments in layer_work.cpp name each term.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/costmodel/model_spec.h"

namespace bubblesim {

/// A GEMM C[M x N] = A[M x K] B[K x N], `batch` times (a batched GEMM).
struct GemmWork {
  std::string name;
  double m = 0, n = 0, k = 0;
  double batch = 1;
  /// A linear layer's weight GEMM (projections, MLPs, experts): FP8 under `model.fp8_linear`.
  /// False for the attention core, the router and the LM head, which stay in `model.dtype`.
  bool linear = true;
  double flops() const { return 2.0 * m * n * k * batch; }
  /// Operand traffic: A, B read and C written once, `element_bytes` each.
  double bytes(double element_bytes) const {
    return (m * k + k * n + m * n) * batch * element_bytes;
  }
};

/// Memory-bound work: bytes read plus written by elementwise / normalisation / loss kernels,
/// and how many kernels the framework launches for it (layer_work.cpp counts them from the code).
struct MemoryWork {
  std::string name;
  double bytes = 0;
  double kernels = 1;
};

/// One pass (F, B or W) of one component on one GPU.
struct PassWork {
  std::vector<GemmWork> gemms;
  double attention_flops = 0;    // fused attention kernels (FlashAttention), FLOPs as executed
  double attention_kernels = 0;  // their launches
  /// The shape one attention kernel call sees, which picks its published rate (op_timing.h):
  /// the head dimension and the keys each query row meets (the sequence, or one block of it).
  double attention_head_dim = 0, attention_key_len = 0;
  std::vector<MemoryWork> memory;

  double gemm_flops() const;
  /// Kernel launches of the pass: one per GEMM call, the attention kernels, the memory-bound
  /// kernels (collectives are not counted: NCCL runs on its own stream).
  double launches() const;
  double flops() const { return gemm_flops() + attention_flops; }
  double memory_bytes() const;
  /// Appends `other`'s GEMMs, attention kernels and memory-bound kernels.
  void add(const PassWork& other);
};

/// `parallelism.sp_wgrad_input`: under sequence parallelism, how a split backward's W gets the
/// all-gathered input of a column-parallel GEMM (QKV, MLP up, LM head). `Regather`: F and B
/// keep the sequence shard (T/t rows) and W all-gathers it again (the zero-bubble Megatron
/// fork's WeightGradStore); `Keep`: B all-gathers it (as Megatron's unsplit backward does) and
/// keeps the gathered T rows until W (the fork's DeepSpeed patch, zbpp_light). docs/memory.md.
enum class SpWgradInput { Regather, Keep };

/// `parallelism.cp_algorithm`: how the context-parallel ranks exchange K and V. `Ring`: each
/// rank passes its block to the next, one step per block (Transformer Engine's P2P ring,
/// Megatron-Core's default `--cp-comm-type p2p`). `AllGather`: every rank gathers all blocks at
/// once (PyTorch's context_parallel with its default "allgather" rotate method, torchtitan; the
/// Llama 3 paper's all-gather CP). docs/parallelism.md, "Context parallelism".
enum class CpAlgorithm { Ring, AllGather };
inline const char* cp_algorithm_name(CpAlgorithm a) {
  return a == CpAlgorithm::AllGather ? "all-gather" : "ring";
}

/// How the context-parallel ranks exchange K and V: `parallelism.cp_algorithm`, and
/// `parallelism.cp_overlap` (the exchange runs behind the attention of the blocks in hand, as
/// each algorithm's code schedules it; false: nothing hides it, as the Llama 3 paper's
/// all-gather, exposed before the attention, with dK, dV reduce-scattered after it).
struct CpExchange {
  CpAlgorithm algorithm = CpAlgorithm::Ring;
  bool overlap = true;
};

/// Tensor-parallel layout of the GPU: t ranks, with or without Megatron sequence parallelism.
struct Sharding {
  std::int64_t tp = 1;
  bool sp = false;
  std::int64_t ep = 1;  // expert parallelism: the routed experts split over ep GPUs
  SpWgradInput sp_wgrad_input = SpWgradInput::Regather;
  /// Context parallelism: every sequence split over cp GPUs (s / cp tokens each, in 2 cp chunks
  /// for the causal load balancing), attention as a ring over them (docs/parallelism.md).
  std::int64_t cp = 1;
  CpExchange cp_exchange{};  // `parallelism.cp_algorithm`, `cp_overlap`
};

/// The collectives inside one component's passes (op_timing.h times them).
struct ComponentComm {
  /// MoE layers: the bytes one GPU dispatches per all-to-all (its tokens x top_k x hidden x e,
  /// local share included); F has a dispatch and a combine, B their two gradients.
  double a2a_bytes = 0;
  double a2a_count_forward = 0, a2a_count_backward = 0;
  /// Tensor-parallel collectives over `tp_collective_bytes` (the b s h activation), counted in
  /// all-reduce equivalents: an all-reduce without sequence parallelism is 1, with it the
  /// reduce-scatter + all-gather pair that replaces it is 1 and a lone reduce-scatter or
  /// all-gather 1/2 (op_timing.h times them on the TP group).
  double tp_allreduce_forward = 0, tp_allreduce_backward = 0;
  double tp_collective_bytes = 0;
  /// Context parallelism's ring attention: the K and V block one GPU sends its ring neighbour per
  /// step (its s / cp tokens at its kv heads), and the steps: cp - 1 in F, each hidden behind the
  /// attention of the block it holds; in B cp - 1 steps carrying K, V and the dK, dV accumulated
  /// so far, and a last dK, dV step home after the last block (Transformer Engine's
  /// AttnFuncWithCPAndKVP2P, context_parallel.py).
  double cp_kv_bytes = 0;
  double cp_steps = 0;
};

/// One component (a transformer layer, the embedding, or the LM head with its loss) on one GPU.
struct ComponentWork {
  PassWork forward, backward_input, backward_weight;
  /// `memory.recompute.policy: selective`: the forward work redone in B. Standard attention: the
  /// attention core (QK^T, softmax, dropout, attention over V; Korthikanti et al. 2022). Under
  /// FlashAttention, which keeps no scores: the two norms and the MLP activation functions
  /// (Megatron-Core's recompute_modules layernorm and moe_act).
  PassWork selective_recompute;
  double activation_bytes = 0;  // M_B: kept from F until B
  double selective_bytes = 0;   // the part of M_B selective recompute does not keep
  double input_bytes = 0;       // the component's input (what full recompute keeps)
  /// `memory.recompute.policy: op` (torchtitan's per-op selective checkpointing, op_checkpoint.h;
  /// dense layers with fused attention only): the forward work B redoes, the all-reduce
  /// equivalents it redoes, what F keeps per layer and what B rebuilds while it runs the layer.
  struct OpCheckpoint {
    PassWork recompute;
    double recompute_tp = 0, saved_bytes = 0, unit_bytes = 0;
  };
  OpCheckpoint op;
  double weight_grad_bytes = 0;   // M_W: kept from B until W (GEMM inputs and output grads)
  double parameters = 0;          // the whole model's, before the TP split
  double parameters_per_gpu = 0;  // after the TP split (norms and row biases replicated)
  /// What one token uses: `parameters` less the routed experts it is not sent to (docs/moe.md).
  double parameters_activated = 0;
  ComponentComm comm;  // its all-to-alls and tensor-parallel collectives
  /// The routed experts' part (docs/moe.md): their parameters on this GPU (E / ep experts) and
  /// the bytes of M_B they keep (dispatched tokens, activation-function tensors, expert outputs).
  struct Experts {
    double parameters_per_gpu = 0, activation_bytes = 0;
  };
  Experts experts;
};

/// Executed-FLOP fraction of causal attention in FlashAttention (blocks above the diagonal are
/// skipped): 1/2 (Dao 2023, FlashAttention-2, sec. 3.1.1).
inline constexpr double kCausalFraction = 0.5;

/// One transformer layer; `moe_layer` gives it model.moe's MLP (the model must have `moe`).
ComponentWork transformer_layer_work(const TransformerModel& model, const Sharding& sharding,
                                     bool moe_layer = false);
/// Word-embedding lookup (vocab-parallel over t), its dropout, and its weight gradient (dense V/t x
/// h gradient accumulated into the fp32 main gradient during B).
ComponentWork embedding_work(const TransformerModel& model, const Sharding& sharding);
/// Final norm, logits GEMM, fp32 cross-entropy loss, and their gradients. Parameters: the final
/// norm, plus the LM head matrix when it is not tied (the tied copy is counted by stage_params).
ComponentWork lm_head_work(const TransformerModel& model, const Sharding& sharding);

/// Total parameters of the model (layers, embedding, final norm, untied LM head).
double model_parameters(const TransformerModel& model);
/// The parameters one token's computation multiplies through: model_parameters less the routed
/// experts it is not sent to and less the input embedding table (a lookup; counted when tied, as
/// the LM head), DeepSeek's convention for its activated counts (docs/moe.md).
double model_parameters_activated(const TransformerModel& model);

/// Checks the model's shape; "" when fine, else what is wrong (kv_heads must divide heads, ...).
std::string model_shape_error(const TransformerModel& model, std::int64_t tp);

}  // namespace bubblesim
