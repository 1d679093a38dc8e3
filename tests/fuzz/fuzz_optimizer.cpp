// Fuzz target: the optimizer's time limit. The input bytes choose a small instance
// (tests/schedules/optimizer/optimizer_time_limit_property.h: p 2-8, m 1-32, every placement,
// method and objective, offload and recompute, a budget from below M_B to far above m M_B) and a
// time limit of 0.02 to 0.05 s; the run must end within that limit plus five seconds with a table
// the engine replays within the budget (or a schedule constraint error), its certified lower bound
// not above the replayed cost. A violation aborts, so libFuzzer keeps the input. The margin is five
// seconds, not the property test's one: this build is instrumented (ASan, UBSan, coverage), which
// runs the optimizer's uninterruptible steps several times slower (a heuristic run with offload
// and recompute at p 8, m 16 took 1.8 s here, on two busy cores); the class it guards, runs that
// ignore the limit, ran for minutes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/schedules/optimizer/optimizer_time_limit_property.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bubblesim::testing::TimeLimitCase c = bubblesim::testing::time_limit_case(data, size, 0.02);
  if (const auto failed = bubblesim::testing::check_time_limit(c, 5.0)) {
    std::fprintf(stderr, "fuzz_optimizer: %s: %s\n", c.description.c_str(), failed->c_str());
    std::abort();
  }
  return 0;
}
