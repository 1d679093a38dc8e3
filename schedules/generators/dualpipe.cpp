// DualPipe (DeepSeek-V3 technical report; deepseek-ai/DualPipe: dualpipe/dualpipe.py,
// examples/example_dualpipe.py), per docs/schedule-rules.md 4.13.
//
// Placement: two mirrored pipelines over the same p devices, as two replicas of the p stages.
// Replica 0 (direction 0) runs stage s on device s, replica 1 (direction 1) on device p-1-s, so
// every device holds one stage of each direction and every stage's weights exist twice (the engine
// counts static memory per distinct stage a device holds). Microbatches 0..m/2-1 use replica 0
// and enter at device 0; m/2..m-1 use replica 1 and enter at device p-1.
//
// Order: the eight steps of dualpipe_order.h with H = p/2, h = min(r, p-1-r), n = m/2. On device
// r < H phase 0 is direction 0 (stage r), phase 1 is direction 1 (stage p-1-r); on r >= H the
// other way round. Overlapped forward/backward pairs are one fused op (OpKind::ForwardBackward)
// lasting StageCost::fused if set, else T_F + T_B(full); with `overlap: false` they become F then
// B.
//
// Published (DualPipe README, PP = p): per-device bubble (PP/2-1)(T_F&B + T_B - 3T_W), with B the
// full backward; exact under our replay only when T_F = T_I (docs/schedule-rules.md 4.13 caveat).
// Peak activations PP+1 stage units per device; parameters 2x.
#include <fmt/format.h>

#include "dualpipe_order.h"
#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

bool overlap_of(const GeneratorInput& in) {
  return in.params.has("overlap") ? in.params.boolean("overlap") : true;
}

void check_dualpipe(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  if (p < 2 || p % 2 != 0) {
    throw ScheduleConstraintError(
        fmt::format("dualpipe needs an even number of devices p >= 2 (got p = {}); use p = {}, or "
                    "dualpipe-v, which takes any p",
                    p, p < 2 ? 2 : p + 1));
  }
  if (m % 2 != 0 || m < 2 * p) {
    const std::int32_t fit = std::max(2 * p, m + (m % 2));
    throw ScheduleConstraintError(fmt::format(
        "dualpipe needs an even number of microbatches m >= 2p = {} (got m = {}); use m = {}",
        2 * p, m, fit));
  }
}

Table generate_dualpipe(const GeneratorInput& in) {
  check_dualpipe(in);
  const std::int32_t p = in.devices, m = in.microbatches, half = p / 2, n = m / 2;
  Table t;
  t.devices = p;
  t.stages = p;
  t.microbatches = m;
  t.placement = Placement::straight(p);
  t.placement.device_of_stage.emplace_back(static_cast<std::size_t>(p));
  for (std::int32_t s = 0; s < p; ++s)
    t.placement.device_of_stage[1][static_cast<std::size_t>(s)] = p - 1 - s;
  t.placement.replica_of_microbatch.resize(static_cast<std::size_t>(m));
  for (std::int32_t j = 0; j < m; ++j)
    t.placement.replica_of_microbatch[static_cast<std::size_t>(j)] = j < n ? 0 : 1;
  t.device_ops.resize(static_cast<std::size_t>(p));
  for (std::int32_t r = 0; r < p; ++r) {
    const dualpipe_detail::Phase direction0{r, 0}, direction1{p - 1 - r, n};
    const dualpipe_detail::Phase phases[2] = {r < half ? direction0 : direction1,
                                              r < half ? direction1 : direction0};
    t.device_ops[static_cast<std::size_t>(r)] =
        dualpipe_detail::device_order(phases, {half, std::min(r, p - 1 - r), n, overlap_of(in)});
  }
  return t;
}

Formula dualpipe_formula(const GeneratorInput& in) {
  const StageCost c = in.costs.stages.empty() ? StageCost{} : in.costs.stages.front();
  return dualpipe_detail::formula(
      in.devices, c, has_uniform_stage_times(in.costs) && !in.costs.stages.empty(), overlap_of(in));
}

}  // namespace

void register_dualpipe(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{
          "dualpipe",
          "two mirrored pipelines (microbatches split between directions, weights replicated), "
          "overlapped forward/backward pairs as fused ops",
          "mirrored pair",
          "DeepSeek-V3 technical report; deepseek-ai/DualPipe dualpipe.py",
          {boolean_param(
              "overlap", true,
              "emit each overlapped pair as one fused F&B op (true) or as F then B (false)")}},
      generate_dualpipe, dualpipe_formula});
}

}  // namespace bubblesim
