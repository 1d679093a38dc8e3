#pragma once
// Replay settings a scenario gives and the engine obeys: how point-to-point sends occupy their
// sender (communication.p2p) and how iterations end (iteration.barrier), docs/iterations.md.
// Plain data in the table model, so the scenario layer can hold them without the engine.

#include <cstdint>
#include <string_view>

namespace bubblesim {

/// How a cross-device send occupies its sender (communication.p2p).
enum class P2pMode : std::uint8_t {
  Async,     // the sender's compute stream goes on at once; the receiver waits for the data
  Blocking,  // the sender's compute stream is held until its sends have arrived (Megatron's
             // batched send/receive waits for completion); the receiver waits for the data
};

/// What separates two training iterations (iteration.barrier).
enum class IterationBarrier : std::uint8_t {
  Global,  // every device waits for the slowest (plus the barrier's own time) before its step
  None,    // each device steps and starts its next iteration on its own (post-validation)
};

constexpr std::string_view p2p_mode_name(P2pMode m) {
  return m == P2pMode::Blocking ? "blocking" : "async";
}
constexpr std::string_view iteration_barrier_name(IterationBarrier b) {
  return b == IterationBarrier::None ? "none" : "global";
}

}  // namespace bubblesim
