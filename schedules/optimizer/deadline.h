#pragma once
// The one wall-clock deadline of an optimizer run: `optimize` sets it from
// `time_limit` and every phase checks it, the bounds' depth-first searches, the seeds, the local
// search, the MILP windows and the full MILP, CBC's LP relaxations included (cbc_handle.h).
// A phase stopped by it keeps what it has: a bound stays the last one certified, the search its
// best order, so the run still returns a valid table.

#include <chrono>

namespace bubblesim::optimizer {

using Clock = std::chrono::steady_clock;

/// No deadline.
inline constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

inline bool passed(Clock::time_point deadline) {
  return deadline != kNoDeadline && Clock::now() >= deadline;
}

/// Seconds until `deadline` (negative once it has passed; very large without one).
inline double seconds_left(Clock::time_point deadline) {
  if (deadline == kNoDeadline) return 1e9;
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

/// `seconds` from now as a deadline (kNoDeadline for a limit too large to represent).
inline Clock::time_point deadline_after(double seconds) {
  if (!(seconds < 1e9)) return kNoDeadline;
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace bubblesim::optimizer
