#include "sim/costmodel/model_costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/costmodel/component_timer.h"
#include "sim/costmodel/cp_exposure.h"
#include "sim/costmodel/mtp_work.h"
#include "sim/costmodel/op_timing.h"
#include "sim/costmodel/stage_layout.h"
#include "sim/costmodel/stage_recompute.h"

namespace bubblesim {

namespace {

Bytes to_bytes(double v) {
  if (!(v < 9.2e18))
    throw std::invalid_argument(fmt::format("{:g} bytes do not fit in a 64-bit count", v));
  return Bytes(static_cast<std::int64_t>(std::llround(v)));
}

/// The routed experts' part of a MoE layer's work (the GEMMs and kernels named expert_*).
ComponentWork routed_experts(const ComponentWork& moe) {
  auto only = [](const PassWork& w) {
    PassWork out;
    auto routed = [](const std::string& name) { return name.rfind("expert_", 0) == 0; };
    for (const auto& g : w.gemms)
      if (routed(g.name)) out.gemms.push_back(g);
    for (const auto& m : w.memory)
      if (routed(m.name)) out.memory.push_back(m);
    return out;
  };
  ComponentWork c;
  c.forward = only(moe.forward);
  c.backward_input = only(moe.backward_input);
  c.backward_weight = only(moe.backward_weight);
  return c;
}

/// What one (virtual) stage holds.
struct Holding {
  std::int64_t first_layer = 0;  // model order: the first k layers stay dense under model.moe
  std::int64_t layers = 0;
  bool embedding = false, lm_head = false, tied_copy = false;
  std::int32_t pipeline_stage = 0;  // whose TP / DP groups time its collectives
};

class StageBuilder {
 public:
  explicit StageBuilder(const ModelCostInputs& in)
      : in_(in),
        layer_(transformer_layer_work(in.model, in.sharding)),
        moe_(in.model.moe ? transformer_layer_work(in.model, in.sharding, true) : ComponentWork{}),
        embedding_(embedding_work(in.model, in.sharding)),
        head_(lm_head_work(in.model, in.sharding)),
        mtp_{mtp_projection_work(in.model, in.sharding), {}, mtp_block_is_moe(in.model)},
        timer_(in, layer_) {
    layer_s_ = timer_.of(layer_);
    if (in.per_layer) {
      layer_s_.forward = in.per_layer->forward.seconds();
      layer_s_.backward_input = in.per_layer->backward_input.seconds();
      layer_s_.backward_weight = in.per_layer->backward_weight.seconds();
      if (in.per_layer->activation) layer_activation_ = in.per_layer->activation->as_double();
      if (in.per_layer->weight_grad) layer_weight_grad_ = in.per_layer->weight_grad->as_double();
    }
    if (!in.per_layer || !in.per_layer->activation) layer_activation_ = layer_.activation_bytes;
    if (!in.per_layer || !in.per_layer->weight_grad) layer_weight_grad_ = layer_.weight_grad_bytes;
    embedding_s_ = timer_.of(embedding_);
    if (in.model.moe) {
      moe_s_ = timer_.of(moe_);
      experts_s_ = timer_.of(routed_experts(moe_));
      TransformerModel uniform = in.model;
      uniform.moe->imbalance = 1.0;
      experts_uniform_s_ =
          timer_.of(routed_experts(transformer_layer_work(uniform, in.sharding, true)));
    }
    head_s_ = timer_.of(head_);
    mtp_.seconds = timer_.of(mtp_.work);
  }

  const ComponentTimer& timer() const { return timer_; }

  /// `parallelism.tp_comm_overlap`: one layer's sequence-parallel collectives of F (or B)
  /// pipelined with its GEMMs as Transformer Engine's userbuffers run them: each all-gather and
  /// reduce-scatter is cut into t chunks, each chunk's transfer beside the GEMM of the previous
  /// one, so the layer pays the first chunk of its collectives and whatever they take beyond its
  /// linear GEMMs (`one_tp`: one all-reduce equivalent). Plus the SMs the collectives' kernels
  /// reserve (`tp_comm_sm_share`, overlap.tp_comm_sms): the GEMMs beside TE's `pipeline` and
  /// `bulk` methods run on the rest (sm_reserved_gemms), so they take 1 / (1 - share) as long.
  double overlapped_tp(const ComponentWork& layer, double one_tp, bool backward) const {
    const PassWork& pass = backward ? layer.backward_input : layer.forward;
    const double count =
        backward ? layer.comm.tp_allreduce_backward : layer.comm.tp_allreduce_forward;
    PassWork gemms;
    gemms.gemms = pass.gemms;
    const double comm = count * one_tp, gemm = timer_.seconds(gemms, backward);
    const double share = in_.tp_comm_sm_share;
    double reserved = 0;
    if (share > 0 && count > 0) {
      PassWork beside;
      beside.gemms = sm_reserved_gemms(pass, backward);
      reserved = timer_.seconds(beside, backward) * share / (1.0 - share);
    }
    return std::max(0.0, comm - gemm) + comm / static_cast<double>(in_.sharding.tp) + reserved;
  }

  /// The GEMMs of a dense layer that run beside an SM-reserving userbuffers kernel (Transformer
  /// Engine's initialize_ub defaults): in F the row-parallel projections whose outputs are
  /// reduce-scattered (`pipeline`: attention_out, mlp_down), in B the column-parallel input
  /// gradients whose all-gather and reduce-scatter run in bulk (qkv_dx, mlp_up_dx). The
  /// `ring_exchange` GEMMs (qkv, mlp_up in F; attention_out_dx, mlp_down_dx in B) keep every SM.
  static std::vector<GemmWork> sm_reserved_gemms(const PassWork& pass, bool backward) {
    std::vector<GemmWork> out;
    for (const GemmWork& g : pass.gemms) {
      const bool reserved = backward ? (g.name == "qkv_dx" || g.name == "mlp_up_dx")
                                     : (g.name == "attention_out" || g.name == "mlp_down");
      if (reserved) out.push_back(g);
    }
    return out;
  }

  /// `units`, when given, receives the stage's FSDP units (ModelCosts::shard_units).
  StageBreakdown build(const Holding& hold, StageUnits* units_out = nullptr) const {
    const double n = static_cast<double>(hold.layers);
    // Dense and MoE layers of the stage: layer i is MoE from moe.dense_layers on.
    const std::int64_t dense_end =
        in_.model.moe ? std::min(in_.model.moe->dense_layers, hold.first_layer + hold.layers)
                      : hold.first_layer + hold.layers;
    const double nd = static_cast<double>(std::max<std::int64_t>(0, dense_end - hold.first_layer));
    const double nm = n - nd;
    // Multi-token prediction (mtp_work.h): per depth its projection part, one block of the
    // model's kind and a second pass through the LM head and the loss, on the head's stage.
    const double depth = hold.lm_head ? static_cast<double>(in_.model.embedding.mtp_depth) : 0.0;
    const double ne = nm + (mtp_.moe ? depth : 0.0);  // MoE blocks: the stage's and the MTP's
    const ComponentWork& block = mtp_.moe ? moe_ : layer_;
    const PassSeconds& block_s = mtp_.moe ? moe_s_ : layer_s_;
    auto sum = [&](double dense, double moe) { return nd * dense + nm * moe; };
    const RecomputeSettings& rc = in_.recompute;
    const bool selective = rc.policy == MemoryPolicy::Selective;
    StageBreakdown s;
    s.layers = hold.layers;
    s.embedding = hold.embedding;
    s.lm_head = hold.lm_head;
    auto at = [](double seconds) { return seconds; };

    s.forward.layers = at(sum(layer_s_.forward, moe_s_.forward));
    s.backward_input.layers = at(sum(layer_s_.backward_input, moe_s_.backward_input));
    s.backward_weight.layers = at(sum(layer_s_.backward_weight, moe_s_.backward_weight));
    if (selective)
      s.backward_input.recompute =
          at(sum(layer_s_.selective_recompute, moe_s_.selective_recompute));
    const double layers_tp_f =
        sum(layer_.comm.tp_allreduce_forward, moe_.comm.tp_allreduce_forward);
    const double layers_tp_b =
        sum(layer_.comm.tp_allreduce_backward, moe_.comm.tp_allreduce_backward);
    double tp_f = layers_tp_f, tp_b = layers_tp_b;
    if (hold.embedding) {
      s.forward.embedding = at(embedding_s_.forward);
      s.backward_input.embedding = at(embedding_s_.backward_input);
      tp_f += embedding_.comm.tp_allreduce_forward;
      tp_b += embedding_.comm.tp_allreduce_backward;
    }
    if (hold.lm_head) {
      s.forward.lm_head = at(head_s_.forward);
      s.backward_input.lm_head = at(head_s_.backward_input);
      s.backward_weight.lm_head = at(head_s_.backward_weight);
      tp_f += head_.comm.tp_allreduce_forward;
      tp_b += head_.comm.tp_allreduce_backward;
    }
    auto mtp_pass = [&](double PassSeconds::*pass) {
      return depth * (mtp_.seconds.*pass + block_s.*pass + head_s_.*pass);
    };
    s.forward.mtp = mtp_pass(&PassSeconds::forward);
    s.backward_input.mtp = mtp_pass(&PassSeconds::backward_input);
    s.backward_weight.mtp = mtp_pass(&PassSeconds::backward_weight);
    if (selective) s.backward_input.recompute += depth * block_s.selective_recompute;
    const double mtp_block_tp_f = depth * block.comm.tp_allreduce_forward;
    const double mtp_block_tp_b = depth * block.comm.tp_allreduce_backward;
    tp_f += depth * (mtp_.work.comm.tp_allreduce_forward + head_.comm.tp_allreduce_forward) +
            mtp_block_tp_f;
    tp_b += depth * (mtp_.work.comm.tp_allreduce_backward + head_.comm.tp_allreduce_backward) +
            mtp_block_tp_b;
    // Measured per-GPU layers already include their TP communication.
    const bool measured_tp = in_.per_layer && in_.per_layer->includes_tp_comm;
    double one_tp = 0;
    if (in_.collectives && in_.sharding.tp > 1) {
      one_tp =
          in_.collectives->tensor_parallel(hold.pipeline_stage, layer_.comm.tp_collective_bytes)
              .seconds();
    }
    auto tp_time = [&](double count, double layer_count) {
      return (measured_tp ? count - layer_count : count) * one_tp;
    };
    s.forward.tp_comm = tp_time(tp_f, layers_tp_f + mtp_block_tp_f);
    s.backward_input.tp_comm = tp_time(tp_b, layers_tp_b + mtp_block_tp_b);
    if (in_.tp_comm_overlap && one_tp > 0 && !measured_tp) {
      // The layers' collectives pipelined with their GEMMs (overlapped_tp): the layers' part of
      // each op's TP time replaced by what their GEMMs leave exposed.
      s.forward.tp_comm +=
          sum(overlapped_tp(layer_, one_tp, false), overlapped_tp(moe_, one_tp, false)) -
          layers_tp_f * one_tp;
      s.backward_input.tp_comm +=
          sum(overlapped_tp(layer_, one_tp, true), overlapped_tp(moe_, one_tp, true)) -
          layers_tp_b * one_tp;
    }
    // Context parallelism: every layer's ring (the stage's and the MTP modules' blocks); a
    // measured per-GPU layer already holds its own.
    const CpExposure ring =
        measured_tp ? CpExposure{} : cp_exposure(in_, layer_, timer_, hold.pipeline_stage);
    s.forward.cp_comm = (n + depth) * ring.forward;
    s.backward_input.cp_comm = (n + depth) * ring.backward;
    s.cp_ring.step_bytes = layer_.comm.cp_kv_bytes;
    s.cp_ring.steps_forward = std::llround((n + depth) * layer_.comm.cp_steps);

    // Parameters on one GPU and the static memory of the ZeRO level.
    double params = sum(layer_.parameters_per_gpu, moe_.parameters_per_gpu);
    if (hold.embedding) params += embedding_.parameters_per_gpu;
    if (hold.lm_head) params += head_.parameters_per_gpu;
    if (hold.tied_copy) params += embedding_.parameters_per_gpu;
    const double mtp_params = depth * (mtp_.work.parameters_per_gpu + block.parameters_per_gpu);
    const double mtp_experts = (mtp_.moe ? depth : 0.0) * moe_.experts.parameters_per_gpu;
    params += mtp_params;
    s.parameters_per_gpu = params;
    s.expert_parameters_per_gpu = ne * moe_.experts.parameters_per_gpu;
    // ZeRO shards the routed experts' state over their own data-parallel group (the t dp / ep
    // GPUs holding the same experts; docs/moe.md), the rest over the dp group.
    const double dense_bytes = static_bytes_per_parameter(in_.model.dtype.bytes, in_.zero);
    const double expert_bytes =
        static_bytes_per_parameter(in_.model.dtype.bytes, expert_zero(in_.zero, in_.sharding));
    s.memory.static_memory = to_bytes((params - s.expert_parameters_per_gpu) * dense_bytes +
                                      s.expert_parameters_per_gpu * expert_bytes);
    s.memory.expert_static = to_bytes(s.expert_parameters_per_gpu * expert_bytes);
    s.memory.expert_activation = to_bytes(ne * moe_.experts.activation_bytes);
    s.mtp.depth = hold.lm_head ? in_.model.embedding.mtp_depth : 0;
    s.mtp.static_memory =
        to_bytes((mtp_params - mtp_experts) * dense_bytes + mtp_experts * expert_bytes);
    auto experts = [&](const PassSeconds& pass) {
      return StageCost::Experts{Time::from_seconds(ne * pass.forward),
                                Time::from_seconds(ne * pass.backward_input),
                                Time::from_seconds(ne * pass.backward_weight)};
    };
    s.experts = {experts(experts_s_), experts(experts_uniform_s_)};

    // Expert all-to-all: a dispatch and a combine per MoE layer in F, their gradients in B, on
    // the stage's EP group; exposed in a lone F or B (an F&B op overlaps its halves':
    // fused_forward_backward; parallelism.a2a_overlap makes such ops, a2a_pairing.h).
    if (ne > 0 && in_.collectives && in_.sharding.ep > 1) {
      const double one =
          in_.collectives->expert_all_to_all(hold.pipeline_stage, moe_.comm.a2a_bytes).seconds();
      s.a2a.forward = ne * moe_.comm.a2a_count_forward * one;
      s.a2a.backward = ne * moe_.comm.a2a_count_backward * one;
      s.a2a.bytes = moe_.comm.a2a_bytes;
      s.a2a.count_forward =
          static_cast<std::int32_t>(std::llround(ne * moe_.comm.a2a_count_forward));
      s.a2a.count_backward =
          static_cast<std::int32_t>(std::llround(ne * moe_.comm.a2a_count_backward));
      s.forward.a2a = s.a2a.forward;
      s.backward_input.a2a = s.a2a.backward;
    }

    // Memory: M_B, M_W, what a recomputing stage keeps, the p2p hidden state (sent as t shards).
    // Never recomputed: the embedding, the LM head, the MTP modules (kept whole under full and
    // op recompute, their block treated as a layer under selective).
    double kept_anyway = 0;
    if (hold.embedding) kept_anyway += embedding_.activation_bytes;
    if (hold.lm_head) kept_anyway += head_.activation_bytes;
    const double block_activation = (mtp_.moe ? moe_.activation_bytes : layer_activation_) -
                                    (selective ? block.selective_bytes : 0.0);
    const double mtp_activation =
        depth * (mtp_.work.activation_bytes + block_activation + head_.activation_bytes);
    kept_anyway += mtp_activation;
    s.mtp.activation = to_bytes(mtp_activation);
    auto bytes_of = [](const ComponentWork& w, double activation) {
      return LayerBytes{activation, w.input_bytes, w.selective_bytes, w.op.saved_bytes,
                        w.op.unit_bytes};
    };
    const StageRecompute r =
        stage_recompute(rc, StageLayers{nd, nm, bytes_of(layer_, layer_activation_),
                                        bytes_of(moe_, moe_.activation_bytes), kept_anyway});
    s.memory.activation = to_bytes(r.activation);
    s.memory.stage_input = to_bytes(r.stage_input);
    const double block_weight_grad = mtp_.moe ? moe_.weight_grad_bytes : layer_weight_grad_;
    s.memory.weight_grad = to_bytes(
        sum(layer_weight_grad_, moe_.weight_grad_bytes) +
        (hold.lm_head ? head_.weight_grad_bytes : 0.0) +
        depth * (mtp_.work.weight_grad_bytes + block_weight_grad + head_.weight_grad_bytes));
    s.p2p = to_bytes(layer_.comm.tp_collective_bytes / static_cast<double>(in_.sharding.tp));
    if (rc.policy == MemoryPolicy::Op) {  // dense layers only (the scenario refuses the rest)
      s.backward_input.recompute += n * layer_s_.op_recompute;
      s.backward_input.recompute += n * layer_.op.recompute_tp * one_tp;
    }
    if (rc.policy == MemoryPolicy::Full) {
      // R: the recomputed layers' forward with its TP collectives, its all-to-all (exposed: R
      // runs alone) and its ring attention.
      s.recompute.layers = r.share * s.forward.layers;
      s.recompute.tp_comm = tp_time(r.share * layers_tp_f, r.share * layers_tp_f);
      s.recompute.a2a = r.share * s.a2a.forward;
      s.recompute.cp_comm = r.share * n * ring.forward;
      // Per unit inside B: the backward redoes it, one unit before running back through it.
      if (rc.in_backward()) s.backward_input.recompute += s.recompute.seconds();
    }
    if (rc.in_backward()) {
      s.memory.recompute_units = std::llround(r.units);
      s.memory.recompute_unit = to_bytes(r.unit);
      s.memory.not_stored = to_bytes(std::max(0.0, r.full_activation - r.activation));
    }
    // ZeRO 2/3's per-microbatch collectives, timed after the recompute inside B is known: FSDP
    // gathers a unit once for its recompute and its backward, so the recompute is compute that
    // hides the next unit's prefetched gather, never a second gather.
    if (in_.collectives && in_.zero.dp > 1 && in_.sharded.any()) {
      StageUnits units{hold.pipeline_stage, hold.embedding ? embedding_.parameters_per_gpu : 0.0};
      units.head =
          params - units.embedding - sum(layer_.parameters_per_gpu, moe_.parameters_per_gpu);
      units.layers = params - units.embedding - units.head;
      units.layer_count = hold.layers;
      units.norm_per_layer = static_cast<double>(in_.model.hidden) * (in_.model.bias ? 4.0 : 2.0);
      add_sharded_collectives(s, units, in_);
      if (units_out) *units_out = units;
    }

    // A whole-stage R op (granularity stage) redoes the recomputed layers; otherwise an R op (the
    // optimizer's) redoes the stage's forward from its input.
    if (rc.policy != MemoryPolicy::Full || rc.in_backward()) s.recompute = s.forward;
    return s;
  }

 private:
  const ModelCostInputs& in_;
  ComponentWork layer_, moe_, embedding_, head_;

  /// The multi-token prediction modules' projection part (mtp_work.h), its times, and whether
  /// their block is a MoE layer.
  struct Mtp {
    ComponentWork work;
    PassSeconds seconds;
    bool moe = false;
  };
  Mtp mtp_;
  ComponentTimer timer_;
  PassSeconds layer_s_, moe_s_, embedding_s_, head_s_, experts_s_, experts_uniform_s_;
  double layer_activation_ = 0, layer_weight_grad_ = 0;
};

/// `layers_per_stage: balanced` (balanced_split, stage_layout.h): each layer's F + B + W (dense
/// or MoE, from a stage holding it alone), the embedding's and the head's (with loss and MTP) over
/// an empty stage's.
struct LayerWeights {
  std::vector<double> layer;
  double embedding = 0, head = 0;
  LayerWeights(const StageBuilder& builder, const ModelCostInputs& in) {
    auto seconds = [&](const Holding& h) {
      const StageBreakdown b = builder.build(h);
      return b.forward.seconds() + b.backward_input.seconds() + b.backward_weight.seconds();
    };
    auto layer_at = [](std::int64_t first) {
      Holding h;
      h.first_layer = first;
      h.layers = 1;
      return h;
    };
    const double empty = seconds(Holding{});
    const std::int64_t dense = in.model.moe ? in.model.moe->dense_layers : in.model.layers;
    const double dense_s = dense > 0 ? seconds(layer_at(0)) - empty : 0.0;
    const double moe_s = dense < in.model.layers ? seconds(layer_at(dense)) - empty : 0.0;
    layer.resize(static_cast<std::size_t>(in.model.layers));
    for (std::size_t l = 0; l < layer.size(); ++l)
      layer[l] = static_cast<std::int64_t>(l) < dense ? dense_s : moe_s;
    Holding e, h;
    e.embedding = in.model.embedding.vocab > 0;
    h.lm_head = true;
    embedding = seconds(e) - empty;
    head = seconds(h) - empty;
  }
  std::vector<std::int64_t> split(std::int32_t parts) const {
    return balanced_split(layer, parts, embedding, head);
  }
};

}  // namespace

ModelCosts model_costs(const ModelCostInputs& in) {
  if (in.stages <= 0) throw std::invalid_argument("the pipeline needs at least one stage");
  if (in.per_layer && in.model.moe)
    throw std::invalid_argument(
        "costs.per_layer describes one dense layer; with model.moe the layers differ (give "
        "stage costs instead)");
  const std::string shape = model_shape_error(in.model, in.sharding.tp);
  if (!shape.empty()) throw std::invalid_argument(shape);
  const std::string layout = layout_error(in.model, in.stages);
  if (!layout.empty()) throw std::invalid_argument(layout);
  const StageBuilder builder(in);
  const bool has_vocab = in.model.embedding.vocab > 0;
  const std::int32_t p = in.stages;

  ModelCosts out;
  out.parameters = model_parameters(in.model);
  out.efficiency_note = builder.timer().note();
  // Megatron's block method recomputes N layers of every stage: a per-stage constant rather than
  // a per-layer weight, so `balanced` weighs the layers without it.
  ModelCostInputs unblocked = in;
  if (in.recompute.layers) unblocked.recompute = RecomputeSettings{};
  std::optional<LayerWeights> weights;
  if (in.model.split.balanced && in.recompute.layers)
    weights.emplace(StageBuilder(unblocked), in);
  else if (in.model.split.balanced)
    weights.emplace(builder, in);
  const std::vector<std::int64_t> layers = weights ? weights->split(p) : stage_layers(in.model, p);
  std::int64_t first = 0;
  for (std::int32_t i = 0; i < p; ++i) {
    Holding h;
    h.first_layer = first;
    h.layers = layers[static_cast<std::size_t>(i)];
    first += h.layers;
    h.embedding = has_vocab && i == 0;
    h.lm_head = i == p - 1;
    h.tied_copy = has_vocab && in.model.embedding.tied && h.lm_head && p > 1;
    h.pipeline_stage = i;
    out.stages.push_back(builder.build(h, &out.shard_units.emplace_back()));
    out.profile.stages.push_back(out.stages.back().cost());
    out.profile.stages.back().moe.a2a_sm.share = in.comm_sm_fraction;
  }
  std::vector<std::int32_t> chunk_counts;
  for (std::int32_t v = 2; v <= kMaxDerivedChunks; ++v) chunk_counts.push_back(v);
  if (layout_chunks(in.model, p) > kMaxDerivedChunks)
    chunk_counts.push_back(layout_chunks(in.model, p));
  for (std::int32_t v : chunk_counts) {
    std::optional<std::vector<std::int64_t>> chunks = chunk_layers(in.model, p, v);
    if (!chunks && weights && in.model.layers >= std::int64_t{p} * v - 2)
      chunks = weights->split(p * v);
    if (!chunks) continue;
    const auto parts = static_cast<std::int32_t>(chunks->size());
    std::vector<StageBreakdown>& list = out.chunked[v];
    std::vector<StageCost>& costs = out.profile.chunked[v];
    std::int64_t chunk_first = 0;
    for (std::int32_t k = 0; k < parts; ++k) {
      Holding h;
      h.first_layer = chunk_first;
      h.layers = (*chunks)[static_cast<std::size_t>(k)];
      chunk_first += h.layers;
      h.embedding = has_vocab && k == 0;
      h.lm_head = k == parts - 1;
      h.tied_copy = has_vocab && in.model.embedding.tied && h.lm_head && p > 1;
      h.pipeline_stage = k / v;  // the profile stage whose groups it uses (CostProfile::for_table)
      list.push_back(builder.build(h));
      costs.push_back(list.back().cost());
      costs.back().moe.a2a_sm.share = in.comm_sm_fraction;
    }
  }
  return out;
}

}  // namespace bubblesim
