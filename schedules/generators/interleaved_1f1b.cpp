// Interleaved 1F1B (Megatron-LM's virtual pipeline stages), docs/schedule-rules.md 4.4.
//
// Loop placement: device r holds v chunks, chunk c being global stage c*p + r. Microbatches are
// cut into consecutive groups of g; the virtual-microbatch sequence lists, group by group, chunk
// 0..v-1 of every microbatch of the group. The k-th forward of a device runs the k-th entry, the
// k-th backward the same microbatch on the mirrored chunk v-1-c. Device r warms up with
// 2(p-r-1) + (v-1)g forwards (capped at m*v), then alternates forward and backward, then drains.
//
// Megatron takes g = microbatch_group_size (default p) and requires p <= g <= m and a last group
// of 0 or at least p microbatches. PyTorch's ScheduleInterleaved1F1B is the same order with
// g = m / max(1, floor(m/p)) (its "microbatches per round"), which must be an integer.
// The order is a stream (schedules/order_stream.h): op i of device r is computed directly.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"
#include "schedules/generators/chunks_param.h"

namespace bubblesim {
namespace {

bool pytorch_grouping(const GeneratorInput& in) {
  return in.params.has("grouping") && in.params.text("grouping") == "pytorch";
}

/// The microbatch group size g, after checking that (p, m, g) fit the chosen grouping rule.
std::int32_t group_size(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  if (pytorch_grouping(in)) {
    if (in.params.has("microbatch_group_size")) {
      throw ScheduleConstraintError(
          "grouping 'pytorch' derives the group size from m and p; remove "
          "microbatch_group_size or use grouping 'megatron'");
    }
    const std::int32_t rounds = std::max(1, m / p);
    if (m % rounds != 0) {
      const std::int32_t below = m - m % rounds, above = below + rounds;
      throw ScheduleConstraintError(fmt::format(
          "grouping 'pytorch': m = {} microbatches must be divisible by max(1, floor(m/p)) = {} "
          "(p = {}); use m = {} or m = {}, or grouping 'megatron'",
          m, rounds, p, below, above));
    }
    return m / rounds;
  }
  const std::int32_t g = in.params.has("microbatch_group_size")
                             ? static_cast<std::int32_t>(in.params.integer("microbatch_group_size"))
                             : p;
  if (m < p) {
    throw ScheduleConstraintError(fmt::format(
        "grouping 'megatron' needs at least p = {} microbatches, got m = {}; use m >= {} or "
        "grouping 'pytorch'",
        p, m, p));
  }
  if (g < p || g > m) {
    throw ScheduleConstraintError(fmt::format(
        "microbatch_group_size must satisfy p <= g <= m, i.e. {} <= g <= {}; got g = {}", p, m, g));
  }
  const std::int32_t last = m % g;
  if (last != 0 && last < p) {
    throw ScheduleConstraintError(fmt::format(
        "the last microbatch group would have m mod g = {} mod {} = {} microbatches, fewer than "
        "p = {} (dependency bubbles); use m a multiple of g (e.g. m = {}), a g dividing m, or a "
        "last group of at "
        "least p (e.g. m = {})",
        m, g, last, p, m - last + g, m - last + p));
  }
  return g;
}

struct VirtualMicrobatch {
  std::int32_t microbatch;
  std::int32_t chunk;
};

/// Entry k of Megatron's schedule table: groups of g microbatches, within a group chunk-major
/// (the last group may be shorter).
VirtualMicrobatch virtual_entry(std::int64_t k, std::int32_t m, std::int32_t v, std::int32_t g) {
  const std::int64_t group = k / (std::int64_t{g} * v), start = group * g;
  const std::int64_t size = std::min<std::int64_t>(g, m - start), offset = k - start * v;
  return {static_cast<std::int32_t>(start + offset % size),
          static_cast<std::int32_t>(offset / size)};
}

std::int32_t warmup_forwards(std::int32_t p, std::int32_t r, std::int32_t m, std::int32_t v,
                             std::int32_t g) {
  return std::min(2 * (p - r - 1) + (v - 1) * g, m * v);
}

// Device r's order, op by op: its k-th forward runs virtual entry k, its k-th backward the same
// microbatch on the mirrored chunk; warm-up forwards, then (F, B) pairs, then the drain.
class InterleavedOrder final : public OrderStream {
 public:
  explicit InterleavedOrder(const GeneratorInput& in)
      : OrderStream(Table::empty(in.devices, chunks_of(in), in.microbatches,
                                 Placement::loop(in.devices, in.devices * chunks_of(in)))),
        p_(in.devices),
        m_(in.microbatches),
        v_(chunks_of(in)),
        g_(group_size(in)) {}
  std::uint64_t count(std::int32_t) const override {
    return 2 * static_cast<std::uint64_t>(m_) * static_cast<std::uint64_t>(v_);
  }
  std::size_t read(std::int32_t r, std::uint64_t first, std::span<Op> out) const override {
    const std::uint64_t total = static_cast<std::uint64_t>(m_) * static_cast<std::uint64_t>(v_);
    const auto warmup = static_cast<std::uint64_t>(warmup_forwards(p_, r, m_, v_, g_));
    const std::uint64_t steady_end = warmup + 2 * (total - warmup);
    std::size_t n = 0;
    for (std::uint64_t i = first; i < 2 * total && n < out.size(); ++i, ++n) {
      bool forward = true;
      std::uint64_t k = i;
      if (i >= steady_end) {
        forward = false, k = (total - warmup) + (i - steady_end);
      } else if (i >= warmup) {
        forward = (i - warmup) % 2 == 0;
        k = forward ? warmup + (i - warmup) / 2 : (i - warmup) / 2;
      }
      const VirtualMicrobatch x = virtual_entry(static_cast<std::int64_t>(k), m_, v_, g_);
      out[n] = forward ? Op::forward(x.chunk * p_ + r, x.microbatch)
                       : Op::backward((v_ - 1 - x.chunk) * p_ + r, x.microbatch);
    }
    return n;
  }

 private:
  std::int32_t p_, m_, v_, g_;
};

std::unique_ptr<OrderStream> stream_interleaved(const GeneratorInput& in) {
  return std::make_unique<InterleavedOrder>(in);
}

Table generate_interleaved(const GeneratorInput& in) { return InterleavedOrder(in).materialize(); }

Formula interleaved_formula(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches, v = chunks_of(in);
  const std::int32_t g = group_size(in);
  Formula f;
  // Device 0 holds the most: its warm-up forwards plus the first steady forward.
  f.peak_activation_units = std::min(2 * (p - 1) + (v - 1) * g + 1, m * v);
  f.note = fmt::format(
      "bubble (p-1)/(v m+p-1) with uniform stages, g >= p and no communication (Narayanan et al. "
      "2021); peak "
      "min(2(p-r-1)+(v-1)g+1, v m) chunk units on device r (g = {})",
      g);
  // With g < p (PyTorch grouping and m < p) chunk c+1 waits for chunk c to come round: no closed
  // form.
  if (has_uniform_stage_times(in.costs) && g >= p)
    f.bubble_ratio = interleaved_bubble_ratio(p, m, v);
  return f;
}

}  // namespace

void register_interleaved_1f1b(Registrar& registrar) {
  ParamSpec chunks =
      integer_param("chunks", kDefaultChunks, "model chunks (virtual stages) per device, v", 1);
  ParamSpec group =
      optional_integer_param("microbatch_group_size",
                             "microbatches per group g (Megatron "
                             "microbatch_group_size_per_vp_stage); default p; needs p <= g <= m",
                             1);
  ParamSpec grouping = choice_param("grouping", "megatron", {"megatron", "pytorch"},
                                    "megatron: g = microbatch_group_size; pytorch: g = m / max(1, "
                                    "floor(m/p)) as in ScheduleInterleaved1F1B");
  registrar.add(Generator{
      GeneratorInfo{
          "interleaved-1f1b",
          "1F1B over v chunks per device in a loop (virtual pipeline stages), microbatches in "
          "groups of g",
          "loop",
          "Narayanan et al., SC'21 (arXiv 2104.04473) 2.2; Megatron-LM "
          "forward_backward_pipelining_with_interleaving; PyTorch ScheduleInterleaved1F1B",
          {chunks, group, grouping}},
      generate_interleaved, interleaved_formula, stream_interleaved});
}

}  // namespace bubblesim
