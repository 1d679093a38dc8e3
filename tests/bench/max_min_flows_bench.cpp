// Flow-sharing updates: adding and completing flows on a shared set of links.
#include <benchmark/benchmark.h>

#include "sim/engine/max_min_flows.h"

namespace {

using namespace bubblesim;

void FlowChurn(benchmark::State& state) {
  const auto flows = static_cast<int>(state.range(0));
  const int links = 64;
  std::uint64_t updates = 0;
  for (auto _ : state) {
    MaxMinFlows net(std::vector<double>(links, 25e9));
    Time now;
    for (int i = 0; i < flows; ++i) {
      std::vector<LinkId> route{i % links, (i * 7 + 3) % links};
      if (route[0] == route[1]) route.pop_back();
      net.add(route, 1e6 + 1e3 * (i % 17), now);
      ++updates;
      if (i % 4 == 3) {
        if (auto t = net.next_completion()) {
          now = *t;
          updates += net.complete_finished(now).size();
        }
      }
    }
    while (auto t = net.next_completion()) {
      now = *t;
      updates += net.complete_finished(now).size();
    }
  }
  state.counters["updates/s"] =
      benchmark::Counter(static_cast<double>(updates), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(FlowChurn)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);
