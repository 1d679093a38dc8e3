// Table structure of interleaved-1f1b, looped-bfs, eager-1f1b, zb-h1 and zb-h2
// (docs/schedule-rules.md 4.3-4.7): exact per-device orders on small cases, placement and chunks,
// validity over a grid of (p, m, v), and the constraint errors for shapes a schedule does not
// accept.
#include <doctest/doctest.h>

#include <string>

#include "generator_test_support.h"
#include "schedules/registry.h"
#include "schedules/validator.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

ParamValues chunks(int v) {
  ParamValues pv;
  pv.set("chunks", std::int64_t{v});
  return pv;
}

Table generate(const std::string& name, const GeneratorInput& in) {
  return registry().find(name)->generate(in);
}

std::string order(const std::vector<Op>& ops) {
  std::string s;
  for (const Op& op : ops) s += (s.empty() ? "" : " ") + to_string(op);
  return s;
}

int count(const Table& t, int device, OpKind kind) {
  int n = 0;
  for (const Op& op : t.device_ops[static_cast<std::size_t>(device)]) n += op.kind == kind ? 1 : 0;
  return n;
}

std::string constraint_error(const std::string& name, const GeneratorInput& in) {
  try {
    (void)generate(name, in);
  } catch (const ScheduleConstraintError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the zoo generators are registered with placement, source and declared parameters") {
  for (const char* name : {"interleaved-1f1b", "looped-bfs", "eager-1f1b", "zb-h1", "zb-h2"}) {
    CAPTURE(name);
    const Generator* g = registry().find(name);
    REQUIRE(g != nullptr);
    CHECK_FALSE(g->info.description.empty());
    CHECK_FALSE(g->info.source.empty());
    CHECK(g->formula);
  }
  CHECK(registry().find("interleaved-1f1b")->info.placement == "loop");
  CHECK(registry().find("looped-bfs")->info.placement == "loop");
  CHECK(registry().find("zb-h2")->info.placement == "straight");
  const auto& params = registry().find("interleaved-1f1b")->info.params;
  REQUIRE(params.size() == 3);
  CHECK(params[0].name == "chunks");
  CHECK(std::get<std::int64_t>(params[0].default_value) == 2);
  CHECK(params[0].check(ParamValue{std::int64_t{0}}).has_value());
  CHECK_FALSE(params[0].check(ParamValue{std::int64_t{1}}).has_value());
  CHECK(params[1].name == "microbatch_group_size");
  CHECK(params[1].optional_default);
  CHECK(params[2].name == "grouping");
  CHECK(params[2].choices == std::vector<std::string>{"megatron", "pytorch"});
  CHECK(registry().find("looped-bfs")->info.params.at(0).name == "chunks");
}

TEST_CASE("interleaved-1f1b follows Megatron's schedule table (p=2, v=2, g=3, m=5)") {
  // Virtual microbatches (microbatch, chunk): 0 1 2 0 1 2 3 4 3 4 / 0 0 0 1 1 1 0 0 1 1 (the
  // Megatron code comment). Device 0 holds stages 0 and 2, device 1 stages 1 and 3.
  ParamValues pv = chunks(2);
  pv.set("microbatch_group_size", std::int64_t{3});
  Table t = generate("interleaved-1f1b", input(2, 5, pv));
  CHECK(validate_table(t).empty());
  CHECK(t.stages == 4);
  CHECK(t.chunks == 2);
  CHECK(t.placement.device_of(2, 0) == 0);
  CHECK(t.placement.device_of(3, 0) == 1);
  // Device 0: warm-up 2(p-1) + (v-1)g = 5 forwards.
  CHECK(order(t.device_ops[0]) ==
        "F0.0 F0.1 F0.2 F2.0 F2.1 F2.2 B2.0 F0.3 B2.1 F0.4 B2.2 F2.3 B0.0 F2.4 B0.1 B0.2 B2.3 B2.4 "
        "B0.3 B0.4");
  // Device 1: warm-up 3 forwards.
  CHECK(order(t.device_ops[1]) ==
        "F1.0 F1.1 F1.2 F3.0 B3.0 F3.1 B3.1 F3.2 B3.2 F1.3 B1.0 F1.4 B1.1 F3.3 B1.2 F3.4 B3.3 B3.4 "
        "B1.3 B1.4");
}

TEST_CASE(
    "interleaved-1f1b default group size is p and pytorch grouping derives g = m / max(1, m div "
    "p)") {
  // p = 4, m = 10: Megatron's default g = 4 leaves a last group of 2 < p, PyTorch takes g = 5.
  CHECK(constraint_error("interleaved-1f1b", input(4, 10, chunks(2)))
            .find("m mod g = 10 mod 4 = 2") != std::string::npos);
  ParamValues py = chunks(2);
  py.set("grouping", std::string("pytorch"));
  Table t = generate("interleaved-1f1b", input(4, 10, py));
  CHECK(validate_table(t).empty());
  // Device 0 warm-up: (v-1) g + 2(p-1) = 5 + 6 = 11 forwards, the first five on chunk 0.
  const auto& ops = t.device_ops[0];
  for (int k = 0; k < 5; ++k) CHECK(ops[static_cast<std::size_t>(k)] == Op::forward(0, k));
  CHECK(ops[5] == Op::forward(4, 0));
  CHECK(ops[10] == Op::forward(0, 5));
  CHECK(ops[11] == Op::forward(0, 6));
  CHECK(ops[12] == Op::backward(4, 0));
  ParamValues megatron5 = chunks(2);
  megatron5.set("microbatch_group_size", std::int64_t{5});
  CHECK(generate("interleaved-1f1b", input(4, 10, megatron5)).device_ops == t.device_ops);
}

TEST_CASE("interleaved-1f1b reports shapes it does not accept and says what would fit") {
  CHECK(constraint_error("interleaved-1f1b", input(4, 2, chunks(2))) ==
        "grouping 'megatron' needs at least p = 4 microbatches, got m = 2; use m >= 4 or grouping "
        "'pytorch'");
  ParamValues small = chunks(2);
  small.set("microbatch_group_size", std::int64_t{3});
  CHECK(constraint_error("interleaved-1f1b", input(4, 8, small)) ==
        "microbatch_group_size must satisfy p <= g <= m, i.e. 4 <= g <= 8; got g = 3");
  ParamValues big = chunks(2);
  big.set("microbatch_group_size", std::int64_t{9});
  CHECK(constraint_error("interleaved-1f1b", input(4, 8, big)).find("got g = 9") !=
        std::string::npos);
  CHECK(constraint_error("interleaved-1f1b", input(4, 9, chunks(3))) ==
        "the last microbatch group would have m mod g = 9 mod 4 = 1 microbatches, fewer than p = 4 "
        "(dependency bubbles); use m a multiple of g (e.g. m = 12), a g dividing m, or a last "
        "group of at least p "
        "(e.g. m = 12)");
  ParamValues py = chunks(2);
  py.set("grouping", std::string("pytorch"));
  CHECK(constraint_error("interleaved-1f1b", input(4, 11, py)) ==
        "grouping 'pytorch': m = 11 microbatches must be divisible by max(1, floor(m/p)) = 2 "
        "(p = 4); use m = 10 or m = 12, or grouping 'megatron'");
  py.set("microbatch_group_size", std::int64_t{4});
  CHECK(
      constraint_error("interleaved-1f1b", input(4, 8, py)).find("remove microbatch_group_size") !=
      std::string::npos);
  // The formula checks the same constraints.
  CHECK_THROWS_AS(registry().find("interleaved-1f1b")->formula(input(4, 2, chunks(2))),
                  ScheduleConstraintError);
}

TEST_CASE(
    "interleaved-1f1b is valid over a grid of (p, m, v, g) it accepts, and rejects the rest") {
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 14; ++m) {
      for (int v = 1; v <= 3; ++v) {
        for (int g = p; g <= m + 1; ++g) {
          CAPTURE(p);
          CAPTURE(m);
          CAPTURE(v);
          CAPTURE(g);
          ParamValues pv = chunks(v);
          pv.set("microbatch_group_size", std::int64_t{g});
          const bool fits = g <= m && (m % g == 0 || m % g >= p);
          if (!fits) {
            CHECK_THROWS_AS(generate("interleaved-1f1b", input(p, m, pv)), ScheduleConstraintError);
            continue;
          }
          Table t = generate("interleaved-1f1b", input(p, m, pv));
          CHECK(validate_table(t).empty());
          CHECK(t.op_count() == static_cast<std::size_t>(2 * p * v * m));
        }
        ParamValues py = chunks(v);
        py.set("grouping", std::string("pytorch"));
        if (m % std::max(1, m / p) == 0) {
          CHECK(validate_table(generate("interleaved-1f1b", input(p, m, py))).empty());
        } else {
          CHECK_THROWS_AS(generate("interleaved-1f1b", input(p, m, py)), ScheduleConstraintError);
        }
      }
    }
  }
}

TEST_CASE("looped-bfs runs every chunk's forwards, then the backwards in reverse") {
  Table t = generate("looped-bfs", input(2, 3, chunks(2)));
  CHECK(validate_table(t).empty());
  CHECK(t.chunks == 2);
  CHECK(t.stages == 4);
  CHECK(order(t.device_ops[1]) == "F1.0 F1.1 F1.2 F3.0 F3.1 F3.2 B3.2 B3.1 B3.0 B1.2 B1.1 B1.0");
  CHECK(*registry().find("looped-bfs")->formula(input(2, 3, chunks(2))).peak_activation_units == 6);
  for (int p = 1; p <= 5; ++p) {
    for (int m = 1; m <= 9; ++m) {
      for (int v = 1; v <= 4; ++v) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(v);
        CHECK(validate_table(generate("looped-bfs", input(p, m, chunks(v)))).empty());
      }
    }
  }
}

TEST_CASE("eager-1f1b warms up with 2(p-r)-1 forwards, then alternates backward and forward") {
  Table t = generate("eager-1f1b", input(3, 6));
  CHECK(validate_table(t).empty());
  CHECK(order(t.device_ops[0]) == "F0.0 F0.1 F0.2 F0.3 F0.4 B0.0 F0.5 B0.1 B0.2 B0.3 B0.4 B0.5");
  CHECK(order(t.device_ops[1]) == "F1.0 F1.1 F1.2 B1.0 F1.3 B1.1 F1.4 B1.2 F1.5 B1.3 B1.4 B1.5");
  CHECK(order(t.device_ops[2]) == "F2.0 B2.0 F2.1 B2.1 F2.2 B2.2 F2.3 B2.3 F2.4 B2.4 F2.5 B2.5");
  CHECK(*registry().find("eager-1f1b")->formula(input(3, 6)).peak_activation_units == 5);
  CHECK(*registry().find("eager-1f1b")->formula(input(3, 2)).peak_activation_units == 2);
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 10; ++m)
      CHECK(validate_table(generate("eager-1f1b", input(p, m))).empty());
  }
}

TEST_CASE("zb-h1 follows the paper's order: p-r forwards, r (B, F) rounds, r deferred W's") {
  Table t = generate("zb-h1", input(4, 6));
  CHECK(validate_table(t).empty());
  CHECK(
      order(t.device_ops[0]) ==
      "F0.0 F0.1 F0.2 F0.3 B0.0 W0.0 F0.4 B0.1 W0.1 F0.5 B0.2 W0.2 B0.3 W0.3 B0.4 W0.4 B0.5 W0.5");
  CHECK(
      order(t.device_ops[3]) ==
      "F3.0 B3.0 F3.1 B3.1 F3.2 B3.2 F3.3 B3.3 W3.0 F3.4 B3.4 W3.1 F3.5 B3.5 W3.2 W3.3 W3.4 W3.5");
  CHECK(t.has_weight_op(2, 5));
}

TEST_CASE("zb-h2 warms up with 2(p-r)-1 forwards and defers 2r W's") {
  Table t = generate("zb-h2", input(3, 6));
  CHECK(validate_table(t).empty());
  CHECK(
      order(t.device_ops[0]) ==
      "F0.0 F0.1 F0.2 F0.3 F0.4 B0.0 W0.0 F0.5 B0.1 W0.1 B0.2 W0.2 B0.3 W0.3 B0.4 W0.4 B0.5 W0.5");
  CHECK(
      order(t.device_ops[1]) ==
      "F1.0 F1.1 F1.2 B1.0 F1.3 B1.1 F1.4 B1.2 W1.0 F1.5 B1.3 W1.1 B1.4 W1.2 B1.5 W1.3 W1.4 W1.5");
  CHECK(
      order(t.device_ops[2]) ==
      "F2.0 B2.0 F2.1 B2.1 F2.2 B2.2 F2.3 B2.3 F2.4 B2.4 W2.0 F2.5 B2.5 W2.1 W2.2 W2.3 W2.4 W2.5");
}

TEST_CASE(
    "zb-h1, zb-h2 and eager-1f1b hold one F, B and W per stage and microbatch for any (p, m)") {
  for (const char* name : {"zb-h1", "zb-h2"}) {
    for (int p = 1; p <= 8; ++p) {
      for (int m = 1; m <= 20; ++m) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        Table t = generate(name, input(p, m));
        CHECK(validate_table(t).empty());
        for (int r = 0; r < p; ++r) {
          CHECK(count(t, r, OpKind::Forward) == m);
          CHECK(count(t, r, OpKind::Backward) == m);
          CHECK(count(t, r, OpKind::Weight) == m);
        }
      }
    }
  }
}
