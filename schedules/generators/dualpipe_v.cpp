// DualPipeV, DualPipe "cut in half" (deepseek-ai/DualPipe: dualpipe/dualpipev.py,
// examples/example_dualpipev.py; PyTorch ScheduleDualPipeV), per docs/schedule-rules.md 4.14.
//
// Placement V: p devices, 2p stages (chunks = 2); device r holds stage r (phase 0) and stage
// 2p-1-r (phase 1); one stream of m microbatches enters and leaves at device 0, no replication.
// Order: the eight steps of dualpipe_order.h with H = p, h = r, n = m. Fused pairs are one
// OpKind::ForwardBackward op (StageCost::fused if set, else T_F + T_B(full)); the first pair of the
// last device is emitted unfused, as DeepSeek and PyTorch do. For p = 4, m = 10 this is action for
// action PyTorch's golden file dualpipev_4rank_10mb.csv (tests/data).
//
// Published: bubble as DualPipe with PP = 2p, chunk times (exact only when T_F = T_I); peak
// 2p+1 chunk activations per device.
#include <fmt/format.h>

#include "dualpipe_order.h"
#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

bool overlap_of(const GeneratorInput& in) {
  return in.params.has("overlap") ? in.params.boolean("overlap") : true;
}

Table generate_dualpipe_v(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  if (m < 2 * p) {
    throw ScheduleConstraintError(
        fmt::format("dualpipe-v needs m >= 2p = {} microbatches (got m = {}); use m >= {} or fewer "
                    "devices (p <= {})",
                    2 * p, m, 2 * p, m / 2));
  }
  Table t = Table::empty(p, 2, m, Placement::v_shape(p));
  for (std::int32_t r = 0; r < p; ++r) {
    const dualpipe_detail::Phase phases[2] = {{r, 0}, {2 * p - 1 - r, 0}};
    t.device_ops[static_cast<std::size_t>(r)] =
        dualpipe_detail::device_order(phases, {p, r, m, overlap_of(in)});
  }
  return t;
}

Formula dualpipe_v_formula(const GeneratorInput& in) {
  const bool any = !in.costs.stages.empty();
  const StageCost chunk = any ? in.costs.for_table(2).front() : StageCost{};
  return dualpipe_detail::formula(2 * in.devices, chunk, any && has_uniform_stage_times(in.costs),
                                  overlap_of(in));
}

}  // namespace

void register_dualpipe_v(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{
          "dualpipe-v",
          "DualPipe cut in half: 2 chunks per device in a V (device r holds stages r and 2p-1-r), "
          "overlapped forward/backward pairs as fused ops",
          "V",
          "deepseek-ai/DualPipe dualpipev.py; PyTorch ScheduleDualPipeV",
          {boolean_param(
              "overlap", true,
              "emit each overlapped pair as one fused F&B op (true) or as F then B (false)")}},
      generate_dualpipe_v, dualpipe_v_formula});
}

}  // namespace bubblesim
