// Chimera and Hanayo (bubblesim construction): tables validate and replay without deadlock over a
// grid; Chimera against its unit-step closed forms (docs/schedule-rules.md 4.15,
// docs/schedules-zoo-c.md); Hanayo against 1F1B where the construction is meant to win.
#include <doctest/doctest.h>

#include <string>

#include "engine_test_support.h"
#include "schedules/validator.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

ParamValues chimera_params(const std::string& concatenation, int pipelines) {
  ParamValues v;
  v.set("concatenation", concatenation);
  v.set("pipelines", std::int64_t{pipelines});
  return v;
}

ParamValues hanayo_params(int waves) {
  ParamValues v;
  v.set("waves", std::int64_t{waves});
  return v;
}

std::string order(const std::vector<Op>& ops) {
  std::string s;
  for (const Op& op : ops) s += (s.empty() ? "" : " ") + to_string(op);
  return s;
}

constexpr std::int64_t kMs = 1'000'000'000LL;  // ps per ms: one unit step

}  // namespace

TEST_CASE(
    "chimera with p = 4: device 0 runs the down pipeline's ends around the up pipeline's last "
    "stage") {
  StageCost c = stage_cost_ms(1, 1, 0);
  Table t = registry().find("chimera")->generate(generator_input(4, 4, c));
  REQUIRE(validate_table(t).empty());
  // Down microbatches 0, 1 (stage 0 here), up microbatches 2, 3 (stage 3 here).
  CHECK(order(t.device_ops[0]) == "F0.0 F0.1 F3.2 B3.2 F3.3 B3.3 B0.0 B0.1");
  CHECK(order(t.device_ops[3]) == "F0.2 F0.3 F3.0 B3.0 F3.1 B3.1 B0.2 B0.3");
  CHECK(t.placement.replicas() == 2);
  CHECK(t.placement.device_of(1, 0) == 1);
  CHECK(t.placement.device_of(1, 2) == 2);
}

TEST_CASE("chimera at F = B, no communication, m = p: 2m + p - 2 steps, ratio (p-2)/(2m+p-2)") {
  for (int p : {2, 4, 6, 8, 16}) {
    CAPTURE(p);
    const int m = p;
    StageCost c = stage_cost_ms(1, 1, 0);
    for (const char* mode : {"direct", "overlapped"}) {
      CAPTURE(mode);
      Table t =
          registry().find("chimera")->generate(generator_input(p, m, c, chimera_params(mode, 1)));
      REQUIRE(validate_table(t).empty());
      SimulationResult r = replay(t, c);
      REQUIRE(r.status == RunStatus::Ok);
      CHECK(r.metrics.makespan == Time::from_ps(kMs * (2 * m + p - 2)));
      CHECK(r.metrics.bubble_ratio ==
            doctest::Approx(static_cast<double>(p - 2) / (2 * m + p - 2)).epsilon(1e-12));
    }
  }
}

TEST_CASE(
    "chimera for m > p: overlapped keeps 2m + p - 2, direct pays every unit's ramps, doubling half "
    "of them") {
  for (int p : {4, 6, 8}) {
    for (int k : {2, 3, 4}) {
      const int m = k * p;
      CAPTURE(p);
      CAPTURE(m);
      StageCost c = stage_cost_ms(1, 1, 0);
      auto makespan = [&](const char* mode) {
        Table t =
            registry().find("chimera")->generate(generator_input(p, m, c, chimera_params(mode, 1)));
        REQUIRE(validate_table(t).empty());
        SimulationResult r = replay(t, c);
        REQUIRE(r.status == RunStatus::Ok);
        return r.metrics.makespan;
      };
      CHECK(makespan("overlapped") == Time::from_ps(kMs * (2 * m + p - 2)));
      CHECK(makespan("direct") == Time::from_ps(kMs * k * (3 * p - 2)));
      if (k % 2 == 0)
        CHECK(makespan("forward-doubling") == Time::from_ps(kMs * (k / 2) * (5 * p - 2)));
    }
  }
}

TEST_CASE(
    "chimera peak activations: p/2+1 at the end devices up to p in the middle; doubled by forward "
    "doubling") {
  for (int p : {4, 6, 8}) {
    for (const char* mode : {"direct", "overlapped", "forward-doubling"}) {
      CAPTURE(p);
      CAPTURE(mode);
      const int scale = std::string(mode) == "forward-doubling" ? 2 : 1;
      StageCost c = stage_cost_ms(1, 1, 0, 1);
      const GeneratorInput in = generator_input(p, 4 * p, c, chimera_params(mode, 1));
      SimulationResult r = replay(registry().find("chimera")->generate(in), c);
      REQUIRE(r.status == RunStatus::Ok);
      for (int d = 0; d < p; ++d) {
        CAPTURE(d);
        CHECK(r.metrics.memory.peak_activation_units_per_device[static_cast<std::size_t>(d)] ==
              scale * (p / 2 + 1 + std::min(d, p - 1 - d)));
      }
      CHECK(r.metrics.memory.peak_activation_units == scale * p);
      CHECK(*registry().find("chimera")->formula(in).peak_activation_units == scale * p);
    }
  }
}

TEST_CASE("chimera holds two stages per device: static memory doubles against 1f1b") {
  StageCost c = stage_cost_ms(1, 1, 0);
  c.static_memory = Bytes(1'000'000);
  const int p = 6;
  SimulationResult chimera =
      replay(registry().find("chimera")->generate(generator_input(p, p, c)), c);
  SimulationResult one = replay(generate("1f1b", p, p, c), c);
  REQUIRE(chimera.status == RunStatus::Ok);
  for (int d = 0; d < p; ++d) {
    CHECK(one.metrics.memory.peak_memory_per_device[static_cast<std::size_t>(d)] ==
          c.static_memory);
    CHECK(chimera.metrics.memory.peak_memory_per_device[static_cast<std::size_t>(d)] ==
          Bytes(2 * c.static_memory.count()));
  }
  // f = 3 pipelines per direction: each device holds 6 distinct stage replicas.
  SimulationResult six = replay(
      registry().find("chimera")->generate(generator_input(p, p, c, chimera_params("direct", 3))),
      c);
  REQUIRE(six.status == RunStatus::Ok);
  for (Bytes b : six.metrics.memory.peak_memory_per_device)
    CHECK(b == Bytes(6 * c.static_memory.count()));
}

TEST_CASE(
    "chimera tables validate, replay and match their formula over a grid of (p, f, m, "
    "concatenation)") {
  for (int p : {2, 4, 6, 8, 12}) {
    for (int f = 1; f <= p / 2; ++f) {
      if ((p / 2) % f != 0) continue;
      for (const char* mode : {"direct", "overlapped", "forward-doubling"}) {
        const int unit = std::string(mode) == "forward-doubling" ? 2 * p : p;
        for (int k : {1, 2, 3}) {
          const int m = k * unit;
          CAPTURE(p);
          CAPTURE(f);
          CAPTURE(mode);
          CAPTURE(m);
          StageCost unit_cost = stage_cost_ms(1, 1, 0);
          const GeneratorInput in = generator_input(p, m, unit_cost, chimera_params(mode, f));
          Table t = registry().find("chimera")->generate(in);
          REQUIRE(validate_table(t).empty());
          SimulationResult r = replay(t, unit_cost);
          REQUIRE(r.status == RunStatus::Ok);
          Formula formula = registry().find("chimera")->formula(in);
          REQUIRE(formula.bubble_ratio.has_value());
          CHECK(r.metrics.bubble_ratio == doctest::Approx(*formula.bubble_ratio).epsilon(1e-12));
          // Other costs and a delay: the order still never deadlocks.
          StageCost uneven = stage_cost_ms(1, 1.2, 0.6);
          CHECK(replay(t, uneven, FixedDelayNetwork{Time::from_seconds(0.1e-3)}).status ==
                RunStatus::Ok);
          CHECK_FALSE(registry()
                          .find("chimera")
                          ->formula(generator_input(p, m, uneven, chimera_params(mode, f)))
                          .bubble_ratio.has_value());
        }
      }
    }
  }
}

TEST_CASE("chimera rejects shapes it cannot build, saying what would fit") {
  const Generator& g = *registry().find("chimera");
  StageCost c = stage_cost_ms(1, 1, 0);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(5, 10, c)),
                       doctest::Contains("even number of devices"), ScheduleConstraintError);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(8, 8, c, chimera_params("direct", 3))),
                       doctest::Contains("must divide p/2 = 4"), ScheduleConstraintError);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(4, 6, c)), doctest::Contains("use m = 8"),
                       ScheduleConstraintError);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(4, 4, c, chimera_params("forward-doubling", 1))),
                       doctest::Contains("multiple of 8"), ScheduleConstraintError);
}

TEST_CASE("hanayo tables validate and replay without deadlock over a grid of (p, W, m)") {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int w : {1, 2, 3}) {
      for (int k : {1, 2, 4}) {
        const int m = k * p;
        CAPTURE(p);
        CAPTURE(w);
        CAPTURE(m);
        StageCost c = stage_cost_ms(2.0 * w, 4.0 * w, 0, 1);
        Table t = registry().find("hanayo")->generate(generator_input(p, m, c, hanayo_params(w)));
        REQUIRE(validate_table(t).empty());
        CHECK(t.chunks == 2 * w);
        CHECK(t.placement.replicas() == 1);
        // Zigzag: the first and the last stage are both on device 0.
        CHECK(t.placement.device_of(0, 0) == 0);
        CHECK(t.placement.device_of(t.stages - 1, 0) == 0);
        CHECK(replay(t, c).status == RunStatus::Ok);
        CHECK(replay(t, stage_cost_ms(1, 1.2, 0.6), FixedDelayNetwork{Time::from_seconds(0.1e-3)})
                  .status == RunStatus::Ok);
      }
    }
  }
}

TEST_CASE(
    "hanayo replays to its slot grid at F = 1, B = 2 chunk slots (values from an independent "
    "prototype)") {
  // p, W, m -> makespan in chunk slots, computed by a separate Python model of the same rule.
  struct Case {
    int p, w, m;
    std::int64_t slots;
  };
  for (Case k : {Case{4, 1, 4, 36}, Case{4, 1, 8, 65}, Case{8, 1, 8, 76}, Case{4, 2, 8, 113},
                 Case{8, 2, 16, 233}}) {
    CAPTURE(k.p);
    CAPTURE(k.w);
    CAPTURE(k.m);
    StageCost c = stage_cost_ms(2.0 * k.w, 4.0 * k.w, 0);
    SimulationResult r = replay(
        registry().find("hanayo")->generate(generator_input(k.p, k.m, c, hanayo_params(k.w))), c);
    REQUIRE(r.status == RunStatus::Ok);
    CHECK(r.metrics.makespan == Time::from_ps(kMs * k.slots));
  }
}

TEST_CASE(
    "hanayo beats 1f1b's bubble at equal costs for m <= 2p (W = 1) and m <= 4p (W = 2), not at m = "
    "4p with W = 1") {
  for (int p : {2, 4, 8}) {
    for (int w : {1, 2}) {
      for (int k : {1, 2, 4}) {
        const int m = k * p;
        CAPTURE(p);
        CAPTURE(w);
        CAPTURE(m);
        StageCost c = stage_cost_ms(2.0 * w, 4.0 * w, 0);
        SimulationResult h = replay(
            registry().find("hanayo")->generate(generator_input(p, m, c, hanayo_params(w))), c);
        SimulationResult one = replay(generate("1f1b", p, m, c), c);
        REQUIRE(h.status == RunStatus::Ok);
        const bool regime = k <= 2 || w == 2;
        if (regime) {
          CHECK(h.metrics.bubble_ratio < one.metrics.bubble_ratio);
        } else {
          CHECK(h.metrics.bubble_ratio > one.metrics.bubble_ratio);
        }
      }
    }
  }
}

TEST_CASE("hanayo needs m to be a multiple of p") {
  const Generator& g = *registry().find("hanayo");
  StageCost c = stage_cost_ms(1, 2, 0);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(4, 6, c)), doctest::Contains("use m = 8"),
                       ScheduleConstraintError);
  CHECK_THROWS_WITH_AS(g.generate(generator_input(4, 2, c)), doctest::Contains("use m = 4"),
                       ScheduleConstraintError);
}
