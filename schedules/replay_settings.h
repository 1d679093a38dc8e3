#pragma once
// Replay settings a scenario gives and the engine obeys: how iterations end (iteration.barrier),
// docs/iterations.md. Plain data in the table model, which the generators read too. (The
// engine's behaviours declare their own keys instead: sim/engine/component_kind.h.)

#include <cstdint>
#include <string_view>

namespace bubblesim {

/// What separates two training iterations (iteration.barrier).
enum class IterationBarrier : std::uint8_t {
  Global,  // every device waits for the slowest (plus the barrier's own time) before its step
  None,    // each device steps and starts its next iteration on its own (post-validation)
};

constexpr std::string_view iteration_barrier_name(IterationBarrier b) {
  return b == IterationBarrier::None ? "none" : "global";
}

}  // namespace bubblesim
