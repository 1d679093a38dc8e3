// A stage's FSDP units and the per-microbatch ZeRO collectives they run (model_costs.h,
// add_sharded_collectives): the unit list sharded_collectives.h times.
#include <algorithm>

#include "sim/costmodel/model_costs.h"

namespace bubblesim {

void add_sharded_collectives(StageBreakdown& s, const StageUnits& u, const ModelCostInputs& in) {
  const ShardedOps& z = in.sharded;
  const CollectiveTimer& timer = *in.collectives;
  // Units in forward order: the embedding (torchtitan wraps tok_embeddings alone; FSDP's root
  // holds it otherwise), each layer (every framework wraps the transformer block), the head
  // with the final norm. Each takes its part of the pass's compute; the layers share the rest.
  // B's compute holds the recompute FSDP runs inside it (one gather serves both); the expert
  // all-to-all is communication on another stream, not compute a gather hides behind.
  std::vector<ShardUnit> units;
  auto pass_s = [](const TimeParts& p) { return p.seconds() - p.zero_comm - p.a2a; };
  const double head_f = s.forward.lm_head + s.forward.mtp;
  const double head_b = s.backward_input.lm_head + s.backward_weight.lm_head +
                        s.backward_input.mtp + s.backward_weight.mtp;
  const double emb_b = s.backward_input.embedding + s.backward_weight.embedding;
  if (u.embedding > 0) units.push_back({u.embedding, 0, s.forward.embedding, emb_b});
  if (u.layer_count > 0) {
    const auto n = static_cast<double>(u.layer_count);
    const double f = (pass_s(s.forward) - s.forward.embedding - head_f) / n;
    const double b = (pass_s(s.backward_input) + pass_s(s.backward_weight) - emb_b - head_b) / n;
    const double params = u.layers / n;
    const double linear = std::max(0.0, params - u.norm_per_layer);
    for (std::int64_t i = 0; i < u.layer_count; ++i)
      units.push_back({params, linear, std::max(0.0, f), std::max(0.0, b)});
  }
  if (u.head > 0) units.push_back({u.head, 0, head_f, head_b});

  ShardedSchedule schedule = z.schedule;
  schedule.sm_fraction = in.comm_sm_fraction;
  if (z.reduce_bucket_bytes > 0 && u.layer_count > 0) {
    const double layer_grad = u.layers / static_cast<double>(u.layer_count) * z.reduce_bytes;
    schedule.units_per_reduce = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(z.reduce_bucket_bytes / std::max(layer_grad, 1.0)));
  }
  const double shard = static_cast<double>(std::max<std::int64_t>(in.zero.dp, 1));
  auto time = [&](double params, double linear) {
    const double gathered =
        (params - linear) * z.gather_bytes + linear * (z.fp8_linear_gather ? 1.0 : z.gather_bytes);
    UnitComm c;
    c.gather = timer.parameter_gather(u.stage, gathered).seconds();
    c.scatter = timer.gradient_reduce_scatter(u.stage, params * z.reduce_bytes).seconds();
    if (z.replicate)
      c.replicate = timer.replicate_all_reduce(u.stage, params * z.reduce_bytes / shard).seconds();
    return c;
  };
  const ShardedExposure e = sharded_exposure(units, schedule, time);
  s.forward.zero_comm = e.forward;
  s.backward_input.zero_comm = e.backward_input;
  s.backward_weight.zero_comm = e.backward_weight;
}

}  // namespace bubblesim
