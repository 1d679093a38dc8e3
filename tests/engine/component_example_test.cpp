// The worked example of docs/engine.md, "Adding a behaviour": a launch latency (every compute op
// starts no earlier than `communication.launch_latency` after its stream became free, as a host
// that issues each kernel only once the previous one is done), written as a behaviour in its own
// folder would be (sim/engine/components/launch_latency/launch_latency.cpp): its key, its
// engagement, the shortcuts it refuses, its hooks, its own record of what it measured, its metric
// row and its report section. Its registration is the list below (built-in behaviours: one line of
// BUBBLESIM_BUILTIN_COMPONENTS in sim/engine/CMakeLists.txt); nothing else changes: the event
// loop, the engine and the fast-path checks run it unchanged.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "engine_test_support.h"
#include "sim/engine/component_kind.h"
#include "sim/engine/components/send_hold/send_hold.h"
#include "sim/engine/engine_component.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

Time ms(double v) { return Time::from_seconds(v * 1e-3); }

// --- launch_latency.cpp, as it would be ----------------------------------------------------

// What it measured, per device: the time ops waited for their launch (its record in
// Metrics::components; launch_latency.h would declare it for other readers).
struct LaunchWaits {
  std::vector<Time> per_device;
};

// Its key: declared once, with its type, default, help and check.
const ComponentSetting& latency_setting() {
  static const ComponentSetting setting{
      ParamSpec{"communication.launch_latency",
                ParamType::Duration,
                Time::zero(),
                "the time from a stream becoming free to its next op's start (a host issuing one "
                "kernel at a time)",
                {},
                [](const ParamValue& v) -> std::optional<std::string> {
                  if (std::get<Time>(v) < Time::zero()) return "a duration >= 0";
                  return std::nullopt;
                },
                false},
      /*reported_at_default=*/false};
  return setting;
}
Time latency_of(const ParamValues& settings) {
  return std::get<Time>(setting_value(settings, latency_setting().spec));
}

// The behaviour: a gate (admits) and its own timer event (schedule / on_event); the wait it
// adds is idle time of its own, not exposed communication (idle_before).
class LaunchLatency final : public EngineComponent {
 public:
  LaunchLatency(const OpGraph& graph, Time delay)
      : delay_(delay),
        pending_(graph.stream_slots(), false),
        waited_(static_cast<std::size_t>(graph.devices()), Time::zero()) {}

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
    const Time wait = std::min(delay_, now - std::min(now, free));
    waited_[slot / OpGraph::kStreams] += wait;
    return wait;
  }
  void report(Metrics& metrics, bool /*completed*/) override {
    metrics.components.put(LaunchWaits{waited_});
  }

 private:
  Time delay_;
  std::vector<bool> pending_;
  std::vector<Time> waited_;  // per device
};

// Its registration: everything the engine and the reports learn about it.
ComponentKind launch_latency_component() {
  ComponentKind kind{
      "launch-latency",
      "a launch latency",
      [](const EngineInput& in) { return latency_of(in.behaviours.settings) > Time::zero(); },
      [](FastPath) { return false; },  // no list replay models it
      [](const ComponentSetup& s) -> std::unique_ptr<EngineComponent> {
        return std::make_unique<LaunchLatency>(s.graph, latency_of(s.in.behaviours.settings));
      },
  };
  kind.settings.push_back(latency_setting());
  kind.rows.push_back(ResultRow{
      "launch_wait_s", MetricUnit::Seconds, MetricDirection::LowerIsBetter, MetricShape::Scalar,
      "largest time a device's ops waited for their launch (communication.launch_latency)",
      [](const Metrics& m) {
        const LaunchWaits* w = m.components.find<LaunchWaits>();
        // Not engaged: absent from the report.
        return w != nullptr ? largest_seconds(w->per_device) : MetricValue{};
      },
      "launch wait"});
  kind.section = ResultSection{"launch", "Launch latency (the device with the most)", ""};
  return kind;
}

// --- the registration line: the built-in behaviours and the example ----------------------------

std::vector<ComponentKind> kinds_with_example() {
  std::vector<ComponentKind> kinds(builtin_components().begin(), builtin_components().end());
  kinds.push_back(launch_latency_component());
  return kinds;
}

constexpr Time kLatency = Time::from_ps(100'000'000);  // 0.1 ms

}  // namespace

TEST_CASE("component example: a behaviour in its own file runs in the engine unchanged") {
  const StageCost c = stage_cost_ms(1, 0.5, 0.5);
  const Table t = generate("1f1b", 1, 3, c);  // one device: F B F B F B, 1 ms each
  const std::vector<ComponentKind> kinds = kinds_with_example();
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(1, c).for_table(t.chunks);
  in.network = NoCostNetwork{};
  in.behaviours.kinds = kinds;
  in.path = ReplayPath::EventLoop;  // to compare event counts with the plain replay

  const SimulationResult plain = simulate(in);  // its key left out: the default 0, not engaged
  in.behaviours.settings.set(latency_setting().spec.name, kLatency);
  const SimulationResult delayed = simulate(in);
  REQUIRE(plain.status == RunStatus::Ok);
  REQUIRE(delayed.status == RunStatus::Ok);
  const auto a = plain.timings.all();
  const auto b = delayed.timings.all();
  REQUIRE(a.size() == 6);
  REQUIRE(b.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(a[i].start == ms(1) * static_cast<std::int64_t>(i));
    // Every op waits 0.1 ms after its stream became free (the first one after time 0).
    CHECK(b[i].start == ms(1.1) * static_cast<std::int64_t>(i) + kLatency);
    CHECK(b[i].end == b[i].start + ms(1));
  }
  // Its wait is its own idle time, not communication.
  CHECK(delayed.metrics.comm.exposed_comm == Time::zero());
  // Its timer events went through the loop: one per op.
  CHECK(delayed.events == plain.events + 6);

  // What it measured is its own record: six waits of 0.1 ms; none without its key.
  CHECK(plain.metrics.components.find<LaunchWaits>() == nullptr);
  const LaunchWaits* waits = delayed.metrics.components.find<LaunchWaits>();
  REQUIRE(waits != nullptr);
  CHECK(waits->per_device == std::vector<Time>{kLatency * 6});
  // Its row reads it: 0.6 ms on the only device; absent when it was not engaged.
  const ResultRow& row = kinds.back().rows.front();
  CHECK(row.get(delayed.metrics).number == doctest::Approx(0.6e-3));
  CHECK_FALSE(row.get(plain.metrics).number.has_value());
}

TEST_CASE("component example: the engine lists it and the shortcuts it refused") {
  const Table t = generate("1f1b", 2, 2, stage_cost_ms(1, 1, 1));
  const std::vector<ComponentKind> kinds = kinds_with_example();
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(2, stage_cost_ms(1, 1, 1)).for_table(t.chunks);
  in.network = FixedDelayNetwork{ms(0.5)};
  in.behaviours.kinds = kinds;
  // Not engaged: every shortcut open, the list replay runs.
  const SimulationResult quick = simulate(in);
  CHECK(quick.list_scheduled);
  CHECK(quick.components.engaged.empty());
  CHECK(quick.components.refused.empty());
  // Engaged: the fast-path checks ask it without knowing it, and the result says who refused.
  in.behaviours.settings.set("communication.launch_latency", kLatency);
  for (FastPath path : kFastPaths) CHECK(refusing_behaviour(path, in) == "a launch latency");
  const SimulationResult slow = simulate(in);
  CHECK_FALSE(slow.list_scheduled);
  CHECK(slow.components.engaged == std::vector<std::string>{"launch-latency"});
  REQUIRE(slow.components.refused.size() == 3);
  CHECK(slow.components.refused[0].path == "list-replay");
  CHECK(slow.components.refused[0].by == "launch-latency");
  CHECK(slow.components.refused[2].path == "shifted-iterations");
  // A built-in one declares and answers the same way: blocking sends permit shifted iterations
  // only, and come first in the registration order.
  set_p2p(in, "blocking");
  CHECK(refusing_behaviour(FastPath::ListReplay, in) == "blocking sends");
  CHECK(refusing_behaviour(FastPath::StreamReplay, in) == "blocking sends");
  CHECK(refusing_behaviour(FastPath::ShiftedIterations, in) == "a launch latency");
  const ComponentUse use = component_use(in);
  CHECK(use.engaged == std::vector<std::string>{"send-hold", "launch-latency"});
  CHECK(use.refused[0].by == "send-hold");
  CHECK(use.refused[2].by == "launch-latency");
}

TEST_CASE("component example: its key is declared once, with its default and its check") {
  const ComponentSetting& s = latency_setting();
  CHECK(setting_value(ParamValues{}, s.spec) == ParamValue{Time::zero()});
  CHECK(s.spec.check(ParamValue{Time::from_ps(-1)}) ==
        std::optional<std::string>("a duration >= 0"));
  CHECK_FALSE(s.spec.check(ParamValue{kLatency}).has_value());
  // The built-in keys are declared the same way, in their section.
  std::vector<std::string> keys;
  for (const ComponentKind& kind : builtin_components())
    for (const ComponentSetting& b : kind.settings) keys.push_back(b.spec.name);
  CHECK(std::count(keys.begin(), keys.end(), std::string(kP2pKey)) == 1);
  CHECK(std::count(keys.begin(), keys.end(), "communication.p2p_sync_gap") == 1);
}
