// The generator contract (sim/runner/generator_contract.h) for every registered generator, and
// for deliberately broken generators so that each check is shown to fire.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "schedules/builtin_generators.h"
#include "schedules/closed_forms.h"
#include "schedules/plugin_loader.h"
#include "schedules/registry.h"
#include "sim/runner/generator_contract.h"

using namespace bubblesim;

namespace {

std::string describe(const std::vector<ContractFailure>& failures) {
  std::string out;
  for (std::size_t i = 0; i < failures.size() && i < 15; ++i) out += to_string(failures[i]) + "\n";
  if (failures.size() > 15) out += fmt::format("... and {} more\n", failures.size() - 15);
  return out;
}

bool has_check(const std::vector<ContractFailure>& failures, const std::string& check) {
  return std::any_of(failures.begin(), failures.end(),
                     [&](const ContractFailure& f) { return f.check == check; });
}

// A correct GPipe-like generator (all F, then all B) to break one property at a time.
Table fill_drain(const GeneratorInput& in) {
  if (in.devices < 2) throw ScheduleConstraintError("needs p >= 2");
  Table t;
  t.devices = t.stages = in.devices;
  t.microbatches = in.microbatches;
  t.placement = Placement::straight(in.devices);
  t.device_ops.resize(static_cast<std::size_t>(in.devices));
  for (std::int32_t r = 0; r < in.devices; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    for (std::int32_t j = 0; j < in.microbatches; ++j) ops.push_back(Op::forward(r, j));
    for (std::int32_t j = 0; j < in.microbatches; ++j) ops.push_back(Op::backward(r, j));
  }
  return t;
}

Formula fill_drain_formula(const GeneratorInput& in) {
  Formula f;
  f.peak_activation_units = in.microbatches;
  f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  return f;
}

Generator base(std::string name) {
  return Generator{GeneratorInfo{std::move(name), "test", "straight", "test", {}}, fill_drain,
                   fill_drain_formula};
}

}  // namespace

TEST_CASE("every registered generator and the example plugin satisfy the contract") {
  // Iterates the registry, so every generator added to BUBBLESIM_BUILTIN_GENERATORS is covered.
  Registry registry = builtin_registry();
  PluginSet plugins;
  plugins.load(EXAMPLE_PLUGIN, registry);
  const ContractGrid grid;
  REQUIRE(registry.names().size() >= 3);
  for (const std::string& name : registry.names()) {
    // from-file replays a table read from a file, whose shape is fixed by the file; its import and
    // replay are checked against every generator by the table-file round-trip tests instead.
    if (name == "from-file") continue;
    CAPTURE(name);
    ContractGrid g = grid;
    if (name == "optimized") {
      // The contract checks the tables, not the search: the heuristic with a short local search
      // keeps the grid fast (the MILP and the search quality have their own tests).
      g.params.set("method", std::string("heuristic"));
      g.params.set("budget_evals", std::int64_t{50});
    }
    ContractStats stats;
    std::vector<ContractFailure> failures =
        check_generator_contract(*registry.find(name), g, &stats);
    INFO(describe(failures));
    CHECK(failures.empty());
    CHECK(stats.accepted > 0);
  }
}

TEST_CASE("the example plugin satisfies the contract for any warm-up") {
  Registry registry;
  PluginSet plugins;
  plugins.load(EXAMPLE_PLUGIN, registry);
  const Generator* g = registry.find("1f1b-warmup");
  REQUIRE(g != nullptr);
  for (std::int64_t warmup : {0, 1, 2, 5, 7, 30}) {
    CAPTURE(warmup);
    ContractGrid grid;
    grid.params.set("warmup", warmup);
    std::vector<ContractFailure> failures = check_generator_contract(*g, grid);
    INFO(describe(failures));
    CHECK(failures.empty());
  }
}

TEST_CASE("the contract passes a correct generator and counts the inputs it rejects") {
  ContractStats stats;
  ContractGrid grid;
  CHECK(check_generator_contract(base("fill-drain"), grid, &stats).empty());
  const int p1_inputs = static_cast<int>(grid.microbatches.size());  // p = 1 is rejected
  CHECK(stats.rejected == p1_inputs);
  CHECK(stats.accepted ==
        static_cast<int>(grid.devices.size() * grid.microbatches.size()) - p1_inputs);
}

TEST_CASE("the contract catches each kind of broken generator") {
  const ContractGrid grid;
  SUBCASE("a wrong closed-form peak") {
    Generator g = base("bad-peak");
    g.formula = [](const GeneratorInput& in) {
      Formula f = fill_drain_formula(in);
      f.peak_activation_units = std::min(in.devices, in.microbatches);  // 1F1B's, not GPipe's
      return f;
    };
    auto failures = check_generator_contract(g, grid);
    CHECK(has_check(failures, "peak"));
    CHECK_FALSE(has_check(failures, "bubble"));
  }
  SUBCASE("a wrong closed-form bubble") {
    Generator g = base("bad-bubble");
    g.formula = [](const GeneratorInput& in) {
      Formula f = fill_drain_formula(in);
      f.bubble_ratio =
          static_cast<double>(in.devices - 1) / (2.0 * in.microbatches + in.devices - 1);
      return f;
    };
    auto failures = check_generator_contract(g, grid);
    CHECK(has_check(failures, "bubble"));
    CHECK_FALSE(has_check(failures, "peak"));
  }
  SUBCASE("a missing op") {
    Generator g = base("missing-op");
    g.generate = [](const GeneratorInput& in) {
      Table t = fill_drain(in);
      t.device_ops.back().pop_back();
      return t;
    };
    CHECK(has_check(check_generator_contract(g, grid), "validate"));
  }
  SUBCASE("a cross-device cycle deadlocks the replay") {
    Generator g = base("deadlock");
    g.generate = [](const GeneratorInput& in) {
      Table t = fill_drain(in);
      if (in.microbatches >= 2) {
        // Device 1 wants microbatch 1 first, but device 0 only sends it after B(0, 0), which
        // needs B(1, 0), which device 1 runs after F(1, 1): a cycle the validator cannot see.
        auto& d0 = t.device_ops[0];
        d0.clear();
        for (std::int32_t j = 0; j < in.microbatches; ++j) {
          d0.push_back(Op::forward(0, j));
          if (j == 0) d0.push_back(Op::backward(0, 0));
        }
        for (std::int32_t j = 1; j < in.microbatches; ++j) d0.push_back(Op::backward(0, j));
        // d0 = F0 B0 F1 ..., d1 = F0 F1 ... B0: B0 on d0 waits for B0 on d1, which waits for F1 on
        // d1, which waits for F1 on d0, which comes after B0 on d0.
      }
      return t;
    };
    auto failures = check_generator_contract(g, grid);
    CHECK(has_check(failures, "replay"));
  }
  SUBCASE("the wrong shape") {
    Generator g = base("wrong-shape");
    g.generate = [](const GeneratorInput& in) {
      GeneratorInput smaller = in;
      smaller.microbatches = std::max(1, in.microbatches - 1);
      return fill_drain(smaller);
    };
    CHECK(has_check(check_generator_contract(g, grid), "shape"));
  }
  SUBCASE("a chunks parameter that is ignored") {
    Generator g = base("ignores-chunks");
    g.info.params.push_back(integer_param("chunks", 1, "chunks per device", 1));
    auto failures = check_generator_contract(g, grid);
    CHECK(has_check(failures, "shape"));
    CHECK(std::all_of(failures.begin(), failures.end(),
                      [](const ContractFailure& f) { return f.chunks > 1; }));
  }
  SUBCASE("non-deterministic generation") {
    Generator g = base("flaky");
    auto calls = std::make_shared<std::atomic<int>>(0);
    g.generate = [calls](const GeneratorInput& in) {
      Table t = fill_drain(in);
      if ((*calls)++ % 2 == 1 && in.microbatches >= 2)
        std::swap(t.device_ops[0][0], t.device_ops[0][1]);
      return t;
    };
    CHECK(has_check(check_generator_contract(g, grid), "deterministic"));
  }
  SUBCASE("an exception other than ScheduleConstraintError") {
    Generator g = base("throws");
    g.generate = [](const GeneratorInput& in) -> Table {
      if (in.microbatches == 3) throw std::out_of_range("index 3");
      return fill_drain(in);
    };
    auto failures = check_generator_contract(g, grid);
    REQUIRE(has_check(failures, "generate"));
    CHECK(failures.front().message.find("index 3") != std::string::npos);
  }
  SUBCASE("a generator that rejects everything") {
    Generator g = base("rejects");
    g.generate = [](const GeneratorInput&) -> Table {
      throw ScheduleConstraintError("never fits");
    };
    auto failures = check_generator_contract(g, grid);
    REQUIRE(failures.size() == 1);
    CHECK(failures.front().check == "accepts");
  }
}
