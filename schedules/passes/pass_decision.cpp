#include "schedules/passes/pass_decision.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bubblesim {

std::string_view pass_name(PassKind kind) {
  switch (kind) {
    case PassKind::Recompute:
      return "recompute";
    case PassKind::Offload:
      return "offload";
    case PassKind::A2aPairing:
      return "a2a pairing";
  }
  return "recompute";
}

std::string PassDecision::summary() const {
  std::int64_t count = 0;
  Bytes bytes;
  for (std::size_t d = 0; d < count_per_device.size(); ++d) {
    count += count_per_device[d];
    bytes += bytes_per_device[d];
  }
  if (kind == PassKind::A2aPairing) {
    return fmt::format(
        "a2a pairing (parallelism.a2a_overlap): {} of {} backward + next forward "
        "pairs run as overlapped F&B ops{}",
        count, candidates,
        rejected > 0 ? fmt::format(", {} left apart (would deadlock)", rejected) : std::string());
  }
  if (in_backward) {
    return fmt::format(
        "recompute ({}, per unit inside B): {} of {} backwards on stages [{}] redo {} unit{} "
        "each, {} not stored, one unit of {} held while each runs",
        memory_policy_name(policy), count, candidates, fmt::join(stages, ", "), units,
        units == 1 ? "" : "s", bytes, unit);
  }
  return fmt::format("{} pass ({}): {} of {} activations on stages [{}], {} {}", pass_name(kind),
                     memory_policy_name(policy), count, candidates, fmt::join(stages, ", "), bytes,
                     kind == PassKind::Offload ? "moved" : "not stored");
}

}  // namespace bubblesim
