// 1F1B (PipeDream-Flush / DAPPLE): device r runs w = min(p-r-1, m) warm-up forwards, then m-w
// rounds of (next forward, oldest backward), then w cool-down backwards
// (docs/schedule-rules.md 4.2). The backward is not split: B runs input and weight gradients as one
// op, as in the zero-bubble paper's comparison. The order is a stream (schedules/order_stream.h):
// op i of device r is computed directly, so a run may replay tables too large to hold.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

// Device r's order, op by op: warm-up forwards, then (F, B) pairs, then cool-down backwards.
class OneFOneBOrder final : public OrderStream {
 public:
  explicit OneFOneBOrder(const GeneratorInput& in)
      : OrderStream(Table::empty(in.devices, 1, in.microbatches, Placement::straight(in.devices))),
        p_(in.devices),
        m_(in.microbatches) {}
  std::uint64_t count(std::int32_t) const override { return 2 * static_cast<std::uint64_t>(m_); }
  std::size_t read(std::int32_t r, std::uint64_t first, std::span<Op> out) const override {
    const auto m = static_cast<std::uint64_t>(m_);
    const auto warmup = static_cast<std::uint64_t>(std::min(p_ - r - 1, m_));
    const std::uint64_t steady_end = warmup + 2 * (m - warmup);
    std::size_t n = 0;
    for (std::uint64_t i = first; i < 2 * m && n < out.size(); ++i, ++n) {
      bool forward = true;
      std::uint64_t j = i;
      if (i >= steady_end) {
        forward = false, j = (m - warmup) + (i - steady_end);
      } else if (i >= warmup) {
        const std::uint64_t k = i - warmup;
        forward = k % 2 == 0;
        j = forward ? warmup + k / 2 : k / 2;
      }
      const auto jj = static_cast<std::int32_t>(j);
      out[n] = forward ? Op::forward(r, jj) : Op::backward(r, jj);
    }
    return n;
  }

 private:
  std::int32_t p_, m_;
};

std::unique_ptr<OrderStream> stream_one_f_one_b(const GeneratorInput& in) {
  return std::make_unique<OneFOneBOrder>(in);
}

Table generate_one_f_one_b(const GeneratorInput& in) { return OneFOneBOrder(in).materialize(); }

Formula one_f_one_b_formula(const GeneratorInput& in) {
  Formula f;
  f.peak_activation_units = std::min(in.devices, in.microbatches);
  f.note = "bubble (p-1)/(m+p-1) with uniform stages and no communication; peak p-r on device r";
  if (has_uniform_stage_times(in.costs))
    f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  return f;
}

}  // namespace

void register_one_f_one_b(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{"1f1b",
                    "one forward, one backward after a warm-up of p-r-1 forwards (PipeDream-Flush)",
                    "straight",
                    "Narayanan et al., PipeDream-Flush 2021; Fan et al., DAPPLE 2021",
                    {}},
      generate_one_f_one_b, one_f_one_b_formula, stream_one_f_one_b});
}

}  // namespace bubblesim
