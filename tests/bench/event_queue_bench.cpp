// Event queue push/pop at several queue sizes: the engine's innermost data structure.
#include <benchmark/benchmark.h>

#include "sim/engine/event_queue.h"

namespace {

void EventQueuePushPop(benchmark::State& state) {
  const auto size = static_cast<std::uint32_t>(state.range(0));
  bubblesim::EventQueue q;
  std::uint64_t x = 88172645463325252ULL;  // xorshift: deterministic pseudo-random times
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<std::int64_t>(x % 1'000'000'000);
  };
  for (std::uint32_t i = 0; i < size; ++i)
    q.push(bubblesim::Time::from_ps(next()), 0, bubblesim::EventType::OpEnd, i);
  for (auto _ : state) {
    bubblesim::Event e = q.pop();
    q.push(e.time + bubblesim::Time::from_ps(next()), 0, bubblesim::EventType::OpEnd, e.payload);
  }
  state.counters["ops/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(EventQueuePushPop)->Name("EventQueue")->RangeMultiplier(8)->Range(64, 262144);
