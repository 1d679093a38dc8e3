#pragma once
// Per-GPU stage costs of a transformer pipeline (docs/models.md): each stage's (and each chunk's)
// F, B, W, R times, activation, weight-gradient and static memory, from the model, the GPU, the
// stage layout, tensor/sequence parallelism, ZeRO, the recompute policy, and optionally the
// measured time of one layer (`costs.per_layer`). Every time is kept with its parts (layers,
// embedding, LM head and loss, TP communication, ZeRO gathers, selective recompute) so reports
// can show where a stage's time comes from.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/stage_costs.h"
#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_spec.h"
#include "sim/costmodel/sharded_collectives.h"

namespace bubblesim {

/// `parallelism.zero`: 0 none, 1 optimizer state sharded across the dp ranks (Megatron's
/// distributed optimizer), 2 also gradients, 3 also parameters (ZeRO, Rajbhandari et al. 2020).
struct ZeroSpec {
  std::int32_t level = 0;
  std::int64_t dp = 1;
  /// `parallelism.zero_overlap` (levels 2 and 3): the per-op collectives move layer by layer,
  /// each layer's hidden behind the previous layer's compute as FSDP prefetches; off, each op
  /// waits for its whole stage's.
  bool overlap = true;
  /// Bytes per parameter held unsharded beside the level's shards (FSDP2 under a pipeline keeps
  /// the gathered weights and the unsharded gradients through the step; data_parallel_engine.h).
  double unsharded_bytes = 0;
};

/// ZeRO 2/3's collectives inside every microbatch's ops (data_parallel_engine.h, PerMicrobatch),
/// timed unit by unit by sharded_collectives.h.
struct ShardedOps {
  ShardedSchedule schedule;        // which collectives run; none: no per-op collective
  double gather_bytes = 2;         // per parameter all-gathered
  double reduce_bytes = 4;         // per gradient reduce-scattered
  bool fp8_linear_gather = false;  // the linear layers' weights gathered as 1-byte FP8
  bool replicate = false;          // HSDP: each gradient shard all-reduced over the replicate group
  /// DeepSpeed: one reduce-scatter per this many gradient bytes (reduce_bucket_size); 0: one per
  /// unit, as FSDP.
  double reduce_bucket_bytes = 0;
  bool any() const {
    return schedule.gather_forward || schedule.gather_backward || schedule.reduce_scatter;
  }
};

/// Static bytes per parameter on one GPU: weights (dtype bytes), fp32 gradients (4) and Adam
/// state (fp32 master copy 4 + two moments 8; fp32 weights are their own master copy), the parts
/// sharded at `zero.level` divided by zero.dp. Level 0, bf16: 18.
double static_bytes_per_parameter(std::int64_t dtype_bytes, const ZeroSpec& zero);

/// HBM bytes per parameter of one optimizer step (`first_principles.optimizer_step`):
/// `per_parameter` on every parameter of the GPU, `per_shard` on its ZeRO shard only.
struct OptimizerBytes {
  double per_parameter = 0, per_shard = 0;
};

/// Megatron-LM's mixed-precision optimizer (megatron/optimizer/optimizer.py,
/// Float16OptimizerWithFloat16Params.step, with apex FusedAdam; the same passes in
/// Megatron-Core's megatron/core/optimizer), kernel by kernel, for model parameters of
/// `dtype_bytes`, a gradient buffer of `gradient_bytes` per parameter (2: 16-bit, 4: fp32
/// main_grad) and, with `loss_scaling` (fp16), the unscale and inf check (parameter_bytes.cpp
/// names each pass).
OptimizerBytes megatron_optimizer_bytes(std::int64_t dtype_bytes, double gradient_bytes,
                                        bool loss_scaling);

/// The ZeRO sharding of the routed experts' state: over the GPUs holding the same experts
/// (tp x dp / ep of them: experts are split by EP, not by TP; docs/moe.md).
ZeroSpec expert_zero(const ZeroSpec& zero, const Sharding& sharding);

/// `costs.per_layer`: measured costs of one transformer layer on one GPU (after TP).
struct MeasuredLayer {
  Time forward, backward_input, backward_weight;
  std::optional<Bytes> activation, weight_grad;
  bool includes_tp_comm = false;  // `costs.per: gpu`: measured on a TP rank, its collectives inside
};

/// Collective times the cost model folds into ops, measured by the caller on the topology.
class CollectiveTimer {
 public:
  virtual ~CollectiveTimer() = default;
  /// One all-reduce equivalent of `bytes` over stage `stage`'s TP group: an all-reduce, or with
  /// sequence parallelism a reduce-scatter plus an all-gather.
  virtual Time tensor_parallel(std::int32_t stage, double bytes) const = 0;
  /// ZeRO over stage `stage`'s data-parallel group: an all-gather of `bytes` of parameters, and a
  /// reduce-scatter of `bytes` of gradients.
  virtual Time parameter_gather(std::int32_t stage, double bytes) const = 0;
  virtual Time gradient_reduce_scatter(std::int32_t stage, double bytes) const = 0;
  /// HSDP: an all-reduce of `bytes` of gradient shards over stage `stage`'s replicate group;
  /// zero without one.
  virtual Time replicate_all_reduce(std::int32_t /*stage*/, double /*bytes*/) const {
    return Time::zero();
  }
  /// One step of context parallelism's ring over stage `stage`'s CP group: every GPU sends
  /// `bytes` to the next at once; zero when there is no CP group.
  virtual Time context_parallel_step(std::int32_t /*stage*/, double /*bytes*/) const {
    return Time::zero();
  }
  /// One expert-parallel all-to-all over stage `stage`'s EP group, every GPU sending `bytes`
  /// split evenly over the group (its own share stays); zero when there is no EP group.
  virtual Time expert_all_to_all(std::int32_t /*stage*/, double /*bytes*/) const {
    return Time::zero();
  }
};

struct ModelCostInputs {
  TransformerModel model;
  GpuSpec gpu;
  std::int32_t stages = 0;
  Sharding sharding;
  ZeroSpec zero;
  ShardedOps sharded;
  /// `memory.recompute` (memory_settings.h): selective and op make B redo their part of each
  /// layer's forward and F keep less; full recompute of `layers` / `unit_layers` / `every` makes R
  /// the recomputed layers' forward and, per unit inside B (granularity layer, the default),
  /// moves it into B, F keeping the units' inputs only. StageCost::backward_recompute says what.
  RecomputeSettings recompute;
  std::optional<MeasuredLayer> per_layer;
  const CollectiveTimer* collectives = nullptr;  // null: no TP / ZeRO communication time
  /// `overlap.comm_sm_fraction`: the share of SMs the all-to-all kernels hold while they run
  /// under other compute (docs/moe.md); that compute runs this much slower meanwhile.
  double comm_sm_fraction = 0;
  /// `parallelism.tp_comm_overlap`: the layers' sequence-parallel collectives pipelined with
  /// their GEMMs (model_costs.cpp, docs/parallelism.md).
  bool tp_comm_overlap = false;
  /// Under tp_comm_overlap, the share of the GPU's SMs the overlapped collectives' kernels
  /// reserve from the GEMMs beside them (`overlap.tp_comm_sms` / the GPU's SMs); 0: none.
  double tp_comm_sm_share = 0;
  /// The GPUs of the synchronous step (all pipeline stages x dp x tp x cp), whose slowest sets
  /// the pace under `first_principles.slowest_gpu`.
  std::int64_t gpus = 1;
};

/// One op's time in seconds and where it comes from; the op lasts total() (rounded once).
struct TimeParts {
  double layers = 0, embedding = 0, lm_head = 0, tp_comm = 0, zero_comm = 0, recompute = 0;
  double a2a = 0;      // the expert all-to-all time the op leaves exposed
  double a2a_sm = 0;   // compute slowed while an overlapped all-to-all holds SMs
  double mtp = 0;      // the multi-token prediction modules' compute (model.mtp_depth)
  double cp_comm = 0;  // ring attention's K, V exchange the attention blocks leave exposed
  double seconds() const {
    return layers + embedding + lm_head + tp_comm + zero_comm + recompute + a2a + a2a_sm + mtp +
           cp_comm;
  }
  Time total() const { return Time::from_seconds(seconds()); }
};

/// Everything one (virtual) stage costs on one of its GPUs.
/// A stage's parameters on one GPU by FSDP unit (sharded_stage.cpp).
struct StageUnits {
  std::int32_t stage = 0;  // the pipeline stage, for the collectives' groups
  double embedding = 0;    // the word embedding (first stage)
  double head = 0;         // the final norm, the LM head or tied copy, the MTP modules
  double layers = 0;       // the layers', all together
  std::int64_t layer_count = 0;
  double norm_per_layer = 0;  // of each layer's, the norms' (not linear weights)
};

struct StageBreakdown {
  std::int64_t layers = 0;
  bool embedding = false, lm_head = false;
  TimeParts forward, backward_input, backward_weight, recompute;
  /// Memory on one GPU, as StageCost's fields of the same names: per microbatch M_B (held F to
  /// B), M_W (its part held until W), what a recomputing stage keeps; and the static bytes.
  struct Memory {
    Bytes activation, weight_grad, stage_input, static_memory;
    /// Recompute inside B (StageCost::backward_recompute): the unit a backward rebuilds while it
    /// runs, what F no longer keeps for it, and how many units one backward rebuilds in turn.
    Bytes recompute_unit, not_stored;
    std::int64_t recompute_units = 0;
    /// The routed experts' share (docs/moe.md): their weights, gradients and optimizer state on
    /// this GPU (E / ep experts per MoE layer; part of static_memory), and the part of M_B their
    /// MLPs keep per microbatch (part of activation).
    Bytes expert_static, expert_activation;
  };
  Memory memory;
  /// The multi-token prediction modules this stage holds (the LM head's stage): their depth, and
  /// their part of M_B and of the static memory (already in `memory`).
  struct Mtp {
    std::int64_t depth = 0;
    Bytes activation, static_memory;
  };
  Mtp mtp;
  Bytes p2p;  // sent to the next stage per microbatch
  double parameters_per_gpu = 0;
  double expert_parameters_per_gpu = 0;  // the routed experts' part (docs/moe.md)
  /// The expert all-to-all (docs/moe.md): seconds of one F and one B in all (on an idle
  /// network), one all-to-all's bytes (what each GPU dispatches), and how many run in one F and
  /// in one B.
  struct AllToAll {
    double forward = 0, backward = 0;
    double bytes = 0;
    std::int32_t count_forward = 0, count_backward = 0;
  };
  AllToAll a2a;
  /// Context parallelism's ring attention (docs/parallelism.md): the K, V bytes one step sends
  /// and the steps of one F (every layer's cp - 1); the exposed part is in forward.cp_comm and
  /// backward_input.cp_comm.
  struct Ring {
    double step_bytes = 0;
    std::int64_t steps_forward = 0;
  };
  Ring cp_ring;
  StageCost::ExpertPhases experts;  // routed-expert GEMMs: at the imbalance, at uniform routing
  StageCost cost() const;
};

struct ModelCosts {
  CostProfile profile;                                          // what the engine replays
  std::vector<StageBreakdown> stages;                           // per pipeline stage
  std::map<std::int32_t, std::vector<StageBreakdown>> chunked;  // per chunk count v: p x v
  /// Per pipeline stage: its FSDP units, when ZeRO 2/3 runs collectives inside its ops
  /// (sharded_stage.cpp); empty units otherwise.
  std::vector<StageUnits> shard_units;
  double parameters = 0;  // the whole model
  /// costs.per_layer: the efficiency (of peak) the measured layer's F, B and W show, and the one
  /// the embedding / LM head GEMMs were timed at; empty otherwise.
  std::string efficiency_note;
};

/// ZeRO 2/3's per-microbatch collectives (inputs.sharded) of stage `units` into the zero_comm
/// parts of `s`'s F, B and W (sharded_collectives.h).
void add_sharded_collectives(StageBreakdown& s, const StageUnits& units,
                             const ModelCostInputs& inputs);

/// Throws std::invalid_argument for a layout that does not fit, a model shape TP cannot split,
/// or a GPU without a positive peak.
ModelCosts model_costs(const ModelCostInputs& inputs);

/// Chunk counts model_costs precomputes besides layers_per_chunk's (2..kMaxDerivedChunks).
inline constexpr std::int32_t kMaxDerivedChunks = 16;

}  // namespace bubblesim
