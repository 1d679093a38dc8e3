// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", arXiv 2405.15362; sail-sg
// zero-bubble-pipeline-parallelism zbv_greedy.py, mem-setup "min"), per
// docs/schedule-rules.md 4.11: V placement (device i holds stages i and 2p-1-i), backward split
// into B and W, built from the building block of controllable_memory_v.h with offsets, for device i
// (0-indexed),
//   F chunk 0: i   F chunk 1: 2p-1-i   B chunk 1: 2p+d+i   B chunk 0: 4p+d-1-i,
// d = 2 if p is a multiple of 3 else 0, each microbatch j adding 6j; W's fill the free slots.
// Published (README, T_F = T_B = T_W): about a third of 1F1B's activation memory,
// floor((p+4)/3) full-stage microbatches; bubble about 2/3 of 1F1B's plus O(n) overhead.
#include <algorithm>
#include <string>

#include "controllable_memory_v.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_v_min(const GeneratorInput& in) {
  const std::int32_t p = in.devices;
  const std::int64_t d = p % 3 == 0 ? 2 : 0;
  return controllable_memory_detail::build_v_table(p, in.microbatches, [&](std::int32_t i) {
    return controllable_memory_detail::BuildingBlock{i, 2 * p - 1 - i, 2 * p + d + i,
                                                     4 * p + d - 1 - i};
  });
}

Formula v_min_formula(const GeneratorInput& in) {
  Formula f;
  // Published in full-stage microbatches (two chunks each); tables count chunks, and fewer than
  // that many microbatches cap it at m.
  f.peak_activation_units = 2 * std::min<std::int32_t>((in.devices + 4) / 3, in.microbatches);
  f.note =
      "README: about a third of 1F1B's activations, floor((p+4)/3) full-stage microbatches = " +
      std::to_string((in.devices + 4) / 3) +
      "; bubble about 2/3 of 1F1B's plus O(n) (T_F = T_B = T_W)";
  return f;
}

}  // namespace

void register_v_min(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"v-min",
                                        "controllable-memory V schedule with about a third of "
                                        "1F1B's activation memory (2 chunks per "
                                        "device in a V, B/W split)",
                                        "V",
                                        "Qi et al., Pipeline Parallelism with Controllable Memory, "
                                        "NeurIPS 2024; sail-sg zbv_greedy.py",
                                        {}},
                          generate_v_min, v_min_formula});
}

}  // namespace bubblesim
