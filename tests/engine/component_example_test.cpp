// A new engine behaviour is one component (sim/engine/engine_component.h): this file adds one,
// a launch latency (every compute op starts no earlier than `delay` after its stream became
// free, as a host that issues each kernel only once the previous one is done), without touching
// the event loop, the fast-path checks or any other component. Its registration is the kinds
// list it is passed in (built-in ones: sim/engine/components/builtin_components.cpp).
#include <doctest/doctest.h>

#include <vector>

#include "engine_test_support.h"
#include "sim/engine/duration_model.h"
#include "sim/engine/engine_component.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/memory_accounting.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/op_graph.h"
#include "sim/engine/op_index.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

Time ms(double v) { return Time::from_seconds(v * 1e-3); }

// The example behaviour: a gate (admits) and its own timer event (schedule / on_event); the wait
// it adds is idle time of its own, not exposed communication (idle_before).
class LaunchLatency final : public EngineComponent {
 public:
  LaunchLatency(const OpGraph& graph, Time delay)
      : delay_(delay), pending_(graph.stream_slots(), false) {}

  bool admits(std::size_t slot, std::uint32_t /*n*/, Time now) override {
    const Time due = host().stream_free_at(slot) + delay_;
    if (now >= due) return true;
    if (!pending_[slot]) {
      pending_[slot] = true;
      host().schedule(id(), due, static_cast<std::uint32_t>(slot));
    }
    return false;
  }
  void on_event(std::uint32_t slot, Time now) override {
    pending_[slot] = false;
    host().try_start(slot, now);
  }
  Time idle_before(std::size_t slot, std::uint32_t /*n*/, Time now) override {
    const Time free = host().stream_free_at(slot);
    return std::min(delay_, now - std::min(now, free));
  }

 private:
  Time delay_;
  std::vector<bool> pending_;
};

constexpr Time kDelay = Time::from_ps(100'000'000);  // 0.1 ms

ComponentKind launch_latency() {
  return ComponentKind{
      "launch-latency",
      "a launch latency",
      [](const EngineInput&) { return true; },
      [](FastPath) { return false; },  // no list replay models it
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<LaunchLatency>(s.graph, kDelay);
      },
  };
}

// The built-in kinds plus the example: what a registration line adds.
std::vector<ComponentKind> kinds_with_example() {
  std::vector<ComponentKind> kinds(builtin_components().begin(), builtin_components().end());
  kinds.push_back(launch_latency());
  return kinds;
}

struct Replayed {
  ReplayTimes times;
  bool completed = false;
};

// One event-loop replay of `in` with the components the kinds make (as Engine::run does).
Replayed replay_with(const EngineInput& in, std::span<const ComponentKind> kinds) {
  const OpIndex index(*in.table);
  const OpGraph graph(index, in.stage_costs);
  std::vector<Time> durations;
  CostDurations().fill(index, in.stage_costs, 0, durations);
  std::unique_ptr<NetworkModel> network = make_network_model(in);
  const std::vector<EngineObserver*> observers;
  MemoryAccounting memory(graph, in.release, {}, std::nullopt, network->hosts(in.table->devices),
                          observers);
  std::vector<std::unique_ptr<EngineComponent>> owned =
      make_components(in, graph, *network, observers, kinds);
  std::vector<EngineComponent*> components;
  for (const auto& c : owned) components.push_back(c.get());
  EventLoop loop(graph, durations, *network, memory, observers, {}, components);
  loop.run();
  Replayed r;
  r.completed = loop.times().completed == graph.size();
  r.times = std::move(loop.times());
  return r;
}

}  // namespace

TEST_CASE("component example: a behaviour in its own file runs in the loop unchanged") {
  const StageCost c = stage_cost_ms(1, 0.5, 0.5);
  const Table t = generate("1f1b", 1, 3, c);  // one device: F B F B F B, 1 ms each
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(1, c).for_table(t.chunks);
  in.network = NoCostNetwork{};

  const Replayed plain = replay_with(in, builtin_components());
  const std::vector<ComponentKind> kinds = kinds_with_example();
  const Replayed delayed = replay_with(in, kinds);
  REQUIRE(plain.completed);
  REQUIRE(delayed.completed);
  const auto& a = plain.times.timings.all();
  const auto& b = delayed.times.timings.all();
  REQUIRE(a.size() == 6);
  REQUIRE(b.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(a[i].start == ms(1) * static_cast<std::int64_t>(i));
    // Every op waits 0.1 ms after its stream became free (the first one after time 0).
    CHECK(b[i].start == ms(1.1) * static_cast<std::int64_t>(i) + kDelay);
    CHECK(b[i].end == b[i].start + ms(1));
  }
  // Its wait is its own idle time, not communication.
  CHECK(delayed.times.exposed_comm[0] == Time::zero());
  // Its timer events went through the loop: one per op.
  CHECK(delayed.times.events == plain.times.events + 6);
}

TEST_CASE("component example: the fast-path checks ask it without knowing it") {
  const Table t = generate("1f1b", 2, 2, stage_cost_ms(1, 1, 1));
  EngineInput in;
  in.table = &t;
  CHECK(refusing_behaviour(FastPath::ListReplay, in).empty());
  const std::vector<ComponentKind> kinds = kinds_with_example();
  for (FastPath path :
       {FastPath::ListReplay, FastPath::StreamReplay, FastPath::ShiftedIterations}) {
    CHECK(refusing_behaviour(path, in, kinds) == "a launch latency");
  }
  // A built-in one is asked the same way: blocking sends permit shifted iterations only.
  in.p2p.mode = P2pMode::Blocking;
  CHECK(refusing_behaviour(FastPath::ListReplay, in) == "blocking sends");
  CHECK(refusing_behaviour(FastPath::StreamReplay, in) == "blocking sends");
  CHECK(refusing_behaviour(FastPath::ShiftedIterations, in).empty());
}
