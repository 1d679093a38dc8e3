// Example plugin: 1F1B with a configurable number of warm-up forwards. Device r runs
// w_r = min(max(warmup - r, 0), m) forwards before its first backward, then alternates one
// forward and one backward, then drains. warmup = p - 1 (the default) is plain 1F1B; more warm-up
// keeps more microbatches in flight (hiding communication latency) at the cost of activation
// memory; less trades bubble for memory. w_r never grows with r, so no device waits for a forward
// that its upstream neighbour has not been allowed to run.
#include <algorithm>
#include <cstdint>

#include "schedules/closed_forms.h"
#include "schedules/plugin_api.h"

namespace {

using namespace bubblesim;

std::int32_t warmup_of(const GeneratorInput& in) {
  if (!in.params.has("warmup")) return in.devices - 1;  // derived default: plain 1F1B
  // Beyond m + p every device already runs all m forwards first (GPipe); cap to stay in range.
  return static_cast<std::int32_t>(
      std::min<std::int64_t>(in.params.integer("warmup"), in.microbatches + in.devices));
}

Table generate(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches, warmup = warmup_of(in);
  if (p < 1 || m < 1) throw ScheduleConstraintError("needs at least one device and one microbatch");
  Table t;
  t.devices = p;
  t.stages = p;
  t.microbatches = m;
  t.placement = Placement::straight(p);
  t.device_ops.resize(static_cast<std::size_t>(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    const std::int32_t w = std::min(std::max(warmup - r, 0), m);
    std::int32_t next_forward = 0, next_backward = 0;
    while (next_forward < w) ops.push_back(Op::forward(r, next_forward++));
    while (next_forward < m) {
      ops.push_back(Op::forward(r, next_forward++));
      ops.push_back(Op::backward(r, next_backward++));
    }
    while (next_backward < m) ops.push_back(Op::backward(r, next_backward++));
  }
  return t;
}

Formula formula(const GeneratorInput& in) {
  Formula f;
  // Device 0 holds its w_0 warm-up activations plus the one of its first steady forward.
  f.peak_activation_units = std::min(warmup_of(in) + 1, in.microbatches);
  f.note = "peak min(warmup+1, m) on device 0; with warmup >= p-1, bubble (p-1)/(m+p-1) as 1F1B";
  if (warmup_of(in) >= in.devices - 1 && has_uniform_stage_times(in.costs)) {
    f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  }
  return f;
}

void register_warmup_1f1b(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{
          "1f1b-warmup",
          "1F1B with a configurable number of warm-up forwards",
          "straight",
          "example plugin (schedules/examples/1f1b_warmup)",
          {optional_integer_param("warmup",
                                  "warm-up forwards on device 0 (device r runs warmup-r); "
                                  "default p-1, plain 1F1B",
                                  0)}},
      generate, formula});
}

}  // namespace

BUBBLESIM_PLUGIN("1f1b-warmup", "1.0.0", register_warmup_1f1b)
