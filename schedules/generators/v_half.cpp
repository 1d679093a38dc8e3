// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory", arXiv 2405.15362; sail-sg
// zero-bubble-pipeline-parallelism zbv_greedy.py, mem-setup "half"), per
// docs/schedule-rules.md 4.11: V placement (device i holds stages i and 2p-1-i), backward split
// into B and W, built from the building block of controllable_memory_v.h with offsets, for device i
// (0-indexed),
//   F chunk 0: 2i   F chunk 1: 3p-2-i   B chunk 1: 3p+d+2i-1   B chunk 0: 6p+d-2-i,
// d = 3 if p is even else 0, each microbatch j adding 6j; W's fill the free slots.
// Published (README, T_F = T_B = T_W): about half of 1F1B's activation memory, floor((p+2)/2)
// full-stage microbatches; bubble about half of 1F1B's.
#include <algorithm>
#include <string>

#include "controllable_memory_v.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_v_half(const GeneratorInput& in) {
  const std::int32_t p = in.devices;
  const std::int64_t d = p % 2 == 0 ? 3 : 0;
  return controllable_memory_detail::build_v_table(p, in.microbatches, [&](std::int32_t i) {
    return controllable_memory_detail::BuildingBlock{2 * i, 3 * p - 2 - i, 3 * p + d + 2 * i - 1,
                                                     6 * p + d - 2 - i};
  });
}

Formula v_half_formula(const GeneratorInput& in) {
  Formula f;
  // Published in full-stage microbatches (two chunks each); tables count chunks, and fewer than
  // that many microbatches cap it at m.
  f.peak_activation_units = 2 * std::min<std::int32_t>((in.devices + 2) / 2, in.microbatches);
  f.note = "README: about half of 1F1B's activations, floor((p+2)/2) full-stage microbatches = " +
           std::to_string((in.devices + 2) / 2) + "; bubble about half of 1F1B's (T_F = T_B = T_W)";
  return f;
}

}  // namespace

void register_v_half(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"v-half",
                                        "controllable-memory V schedule with about half of 1F1B's "
                                        "activation memory (2 chunks per "
                                        "device in a V, B/W split)",
                                        "V",
                                        "Qi et al., Pipeline Parallelism with Controllable Memory, "
                                        "NeurIPS 2024; sail-sg zbv_greedy.py",
                                        {}},
                          generate_v_half, v_half_formula});
}

}  // namespace bubblesim
