// Replays of interleaved-1f1b, looped-bfs, eager-1f1b, zb-h1 and zb-h2 against their closed forms
// (docs/schedule-rules.md 4.3-4.7): bubble ratios and activation peaks with no communication, and
// the zero-bubble paper's per-stage bubbles at (T_F, T_B, T_W) = (1, 1.2, 0.6), p = 8, m = 24.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

ParamValues chunks(int v) {
  ParamValues pv;
  pv.set("chunks", std::int64_t{v});
  return pv;
}

SimulationResult run(const std::string& name, const GeneratorInput& in, const StageCost& c) {
  Table t = registry().find(name)->generate(in);
  SimulationResult r = replay(t, c);
  REQUIRE(r.status == RunStatus::Ok);
  return r;
}

double ms(Time t) { return t.seconds() * 1e3; }

}  // namespace

TEST_CASE(
    "interleaved-1f1b with equal costs: bubble (p-1)/(v m+p-1), peak 2(p-r-1)+(v-1)g+1 chunk "
    "units") {
  for (double backward : {1.0, 2.0}) {
    for (int p : {1, 2, 4, 8}) {
      for (int v : {1, 2, 3, 4}) {
        for (int m : {p, 2 * p, 3 * p, 4 * p + p / 2}) {
          CAPTURE(backward);
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          StageCost c = stage_cost_ms(1, backward, 0, 1);
          // m = 4p + p/2 leaves a last group of p/2 < p under the default g = p: then g = m.
          ParamValues pv = chunks(v);
          if (m % p != 0) pv.set("microbatch_group_size", std::int64_t{m});
          const int g = m % p != 0 ? m : p;
          GeneratorInput in = generator_input(p, m, c, pv);
          SimulationResult r = run("interleaved-1f1b", in, c);
          const double expected = static_cast<double>(p - 1) / (v * m + p - 1);
          CHECK(r.metrics.bubble_ratio == doctest::Approx(expected).epsilon(1e-12));
          // Each device is busy v m chunk ops of (1 + backward)/v ms: makespan = busy / (1 -
          // ratio).
          CHECK(ms(r.metrics.makespan) == doctest::Approx((1 + backward) * (v * m + p - 1) / v));
          for (int dev = 0; dev < p; ++dev) {
            CAPTURE(dev);
            const double peak = std::min(2 * (p - dev - 1) + (v - 1) * g + 1, v * m);
            CHECK(
                r.metrics.memory.peak_activation_units_per_device[static_cast<std::size_t>(dev)] ==
                peak);
          }
          Formula f = registry().find("interleaved-1f1b")->formula(in);
          CHECK(*f.bubble_ratio == doctest::Approx(r.metrics.bubble_ratio).epsilon(1e-12));
          CHECK(*f.peak_activation_units == r.metrics.memory.peak_activation_units);
        }
      }
    }
  }
}

TEST_CASE(
    "interleaved-1f1b with PyTorch grouping: the closed form for m >= p, a larger bubble for m < "
    "p") {
  StageCost c = stage_cost_ms(1, 1, 0, 1);
  for (int p : {2, 3, 4, 6}) {
    for (int m = 1; m <= 3 * p; ++m) {
      for (int v : {2, 3}) {
        if (m % std::max(1, m / p) != 0) continue;
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(v);
        ParamValues pv = chunks(v);
        pv.set("grouping", std::string("pytorch"));
        GeneratorInput in = generator_input(p, m, c, pv);
        SimulationResult r = run("interleaved-1f1b", in, c);
        const double closed_form = static_cast<double>(p - 1) / (v * m + p - 1);
        Formula f = registry().find("interleaved-1f1b")->formula(in);
        if (m >= p) {
          CHECK(r.metrics.bubble_ratio == doctest::Approx(closed_form).epsilon(1e-12));
          CHECK(*f.bubble_ratio == doctest::Approx(closed_form).epsilon(1e-12));
        } else {
          // g = m < p: chunk c+1 of microbatch 0 waits for chunk c to pass every device.
          CHECK(r.metrics.bubble_ratio > closed_form + 1e-3);
          CHECK_FALSE(f.bubble_ratio.has_value());
        }
        const int g = m / std::max(1, m / p);
        CHECK(r.metrics.memory.peak_activation_units ==
              std::min(2 * (p - 1) + (v - 1) * g + 1, v * m));
      }
    }
  }
}

TEST_CASE(
    "looped-bfs holds v m chunk units on every device and matches interleaved's bubble for m >= "
    "p") {
  StageCost c = stage_cost_ms(1, 2, 0, 1);
  for (int p : {2, 4}) {
    for (int v : {1, 2, 3}) {
      for (int m : {p, 2 * p + 1}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        GeneratorInput in = generator_input(p, m, c, chunks(v));
        SimulationResult r = run("looped-bfs", in, c);
        for (double u : r.metrics.memory.peak_activation_units_per_device) CHECK(u == v * m);
        CHECK(r.metrics.bubble_ratio ==
              doctest::Approx(static_cast<double>(p - 1) / (v * m + p - 1)).epsilon(1e-12));
        CHECK(*registry().find("looped-bfs")->formula(in).bubble_ratio ==
              doctest::Approx(r.metrics.bubble_ratio));
      }
    }
  }
  // With m < p a chunk waits for the previous chunk to come round: the formula is not reported.
  GeneratorInput few = generator_input(4, 2, c, chunks(2));
  SimulationResult r = run("looped-bfs", few, c);
  CHECK(r.metrics.bubble_ratio > 3.0 / (2 * 2 + 3));
  CHECK_FALSE(registry().find("looped-bfs")->formula(few).bubble_ratio.has_value());
}

TEST_CASE("eager-1f1b has 1F1B's makespan and peak min(2(p-r)-1, m) on device r") {
  StageCost c = stage_cost_ms(1, 2, 0, 1);
  for (int p : {1, 2, 4, 8}) {
    for (int m : {1, p, 3 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      SimulationResult eager = run("eager-1f1b", generator_input(p, m, c), c);
      SimulationResult one = run("1f1b", generator_input(p, m, c), c);
      CHECK(eager.metrics.makespan == one.metrics.makespan);
      CHECK(eager.metrics.bubble_ratio ==
            doctest::Approx(static_cast<double>(p - 1) / (m + p - 1)).epsilon(1e-12));
      for (int dev = 0; dev < p; ++dev) {
        CHECK(
            eager.metrics.memory.peak_activation_units_per_device[static_cast<std::size_t>(dev)] ==
            std::min(2 * (p - dev) - 1, m));
      }
      CHECK(
          *registry().find("eager-1f1b")->formula(generator_input(p, m, c)).peak_activation_units ==
          eager.metrics.memory.peak_activation_units);
    }
  }
}

TEST_CASE(
    "(T_F, T_B, T_W) = (1, 1.2, 0.6), p = 8, m = 24: per-stage bubble 19.6, 11.2, 7.0; ZB peaks") {
  const int p = 8, m = 24;
  const double mb = 1.0, mw = 0.5;  // M_B and M_W in MiB
  StageCost c = stage_cost_ms(1, 1.2, 0.6, mb, mw);
  const double work = m * (1 + 1.2 + 0.6);
  const Bytes m_b = c.activation, m_w = c.weight_grad;
  struct Expected {
    const char* name;
    double bubble;
  };
  for (Expected e : {Expected{"1f1b", 19.6}, Expected{"zb-h1", 11.2}, Expected{"zb-h2", 7.0}}) {
    CAPTURE(e.name);
    SimulationResult r = run(e.name, generator_input(p, m, c), c);
    CHECK(ms(r.metrics.stage_span_max) - work == doctest::Approx(e.bubble).epsilon(1e-9));
  }
  SimulationResult h1 = run("zb-h1", generator_input(p, m, c), c);
  SimulationResult h2 = run("zb-h2", generator_input(p, m, c), c);
  CHECK(h1.metrics.memory.peak_activation == Bytes(p * m_b.count()));
  CHECK(h2.metrics.memory.peak_activation == Bytes((2 * p - 1) * m_b.count()));
  for (int r = 0; r < p; ++r) {
    CAPTURE(r);
    // ZB Table 2 with worker i = r + 1.
    CHECK(h1.metrics.memory.peak_activation_per_device[static_cast<std::size_t>(r)] ==
          Bytes((p - r) * m_b.count() + r * m_w.count()));
    CHECK(h2.metrics.memory.peak_activation_per_device[static_cast<std::size_t>(r)] ==
          Bytes((2 * p - 2 * r - 1) * m_b.count() + 2 * r * m_w.count()));
  }
  CHECK(*registry().find("zb-h1")->formula(generator_input(p, m, c)).peak_activation_units ==
        h1.metrics.memory.peak_activation_units);
  CHECK(*registry().find("zb-h2")->formula(generator_input(p, m, c)).peak_activation_units ==
        h2.metrics.memory.peak_activation_units);
}

TEST_CASE("zb-h1 and zb-h2 closed forms equal the replay wherever they are reported") {
  const std::vector<double> times{0.5, 1, 1.5, 2, 3};
  int reported_h1 = 0, reported_h2 = 0;
  for (double tf : times) {
    for (double tb : times) {
      for (double tw : times) {
        for (int p : {2, 3, 8}) {
          for (int m : {p - 1, p, 2 * p - 1, 3 * p + 1}) {
            if (m < 1) continue;
            StageCost c = stage_cost_ms(tf, tb, tw);
            for (const char* name : {"zb-h1", "zb-h2"}) {
              Formula f = registry().find(name)->formula(generator_input(p, m, c));
              if (!f.bubble_ratio) continue;
              CAPTURE(name);
              CAPTURE(tf);
              CAPTURE(tb);
              CAPTURE(tw);
              CAPTURE(p);
              CAPTURE(m);
              SimulationResult r = run(name, generator_input(p, m, c), c);
              CHECK(*f.bubble_ratio == doctest::Approx(r.metrics.bubble_ratio).epsilon(1e-9));
              const bool h2 = std::string(name) == "zb-h2";
              (h2 ? reported_h2 : reported_h1) += 1;
              // The paper's per-device bubble, measured over the largest stage span.
              const double span_bubble = (p - 1) * (tf + tb - (h2 ? 2 : 1) * tw);
              CHECK(ms(r.metrics.stage_span_max) - m * (tf + tb + tw) ==
                    doctest::Approx(span_bubble).epsilon(1e-9));
            }
          }
        }
      }
    }
  }
  CHECK(reported_h1 > 100);
  CHECK(reported_h2 > 100);
  // Outside the conditions the formula is withheld: with T_W > T_F the cool-down cannot hide W.
  CHECK_FALSE(registry()
                  .find("zb-h1")
                  ->formula(generator_input(4, 8, stage_cost_ms(1, 1, 2)))
                  .bubble_ratio.has_value());
  CHECK_FALSE(registry()
                  .find("zb-h2")
                  ->formula(generator_input(4, 6, stage_cost_ms(1, 1, 1)))
                  .bubble_ratio.has_value());
}
