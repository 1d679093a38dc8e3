// Looped BFS (breadth-first pipeline parallelism, Lamy-Poirier, arXiv 2211.05953),
// docs/schedule-rules.md 4.5. Loop placement: device r holds chunks c = 0..v-1 as global stages c*p
// + r. Each device runs the forwards of all m microbatches chunk by chunk (increasing), then the
// backwards chunk by chunk in decreasing order, microbatches m-1 down to 0 (PyTorch
// ScheduleLoopedBFS without idle slots).
#include <fmt/format.h>

#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"
#include "schedules/generators/chunks_param.h"

namespace bubblesim {
namespace {

Table generate_looped_bfs(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches, v = chunks_of(in);
  Table t = Table::empty(p, v, m, Placement::loop(p, p * v));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(2 * static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
    for (std::int32_t c = 0; c < v; ++c) {
      for (std::int32_t j = 0; j < m; ++j) ops.push_back(Op::forward(c * p + r, j));
    }
    for (std::int32_t c = v - 1; c >= 0; --c) {
      for (std::int32_t j = m - 1; j >= 0; --j) ops.push_back(Op::backward(c * p + r, j));
    }
  }
  return t;
}

Formula looped_bfs_formula(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches, v = chunks_of(in);
  Formula f;
  f.peak_activation_units = m * v;
  f.note =
      "bubble (p-1)/(v m+p-1) with uniform stages, m >= p (or v = 1) and no communication (chunk "
      "c+1 never "
      "waits for chunk c); peak v m chunk units on every device";
  if (has_uniform_stage_times(in.costs) && (m >= p || v == 1))
    f.bubble_ratio = interleaved_bubble_ratio(p, m, v);
  return f;
}

}  // namespace

void register_looped_bfs(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{
          "looped-bfs",
          "breadth-first over v chunks per device in a loop: all forwards chunk by chunk, then all "
          "backwards in reverse",
          "loop",
          "Lamy-Poirier, Breadth-First Pipeline Parallelism (arXiv 2211.05953); PyTorch "
          "ScheduleLoopedBFS",
          {integer_param("chunks", kDefaultChunks, "model chunks (virtual stages) per device, v",
                         1)}},
      generate_looped_bfs, looped_bfs_formula});
}

}  // namespace bubblesim
