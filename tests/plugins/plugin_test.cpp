// Plugin loading: the real `bubblesim` binary with the example plugin and with broken test plugins
// (each refused with its own message and exit code 2, never a crash), and PluginSet in-process
// (a refused plugin leaves the registry as it was).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../cli/cli_support.h"
#include "schedules/builtin_generators.h"
#include "schedules/plugin_loader.h"
#include "sim/units/diagnostics.h"

namespace fs = std::filesystem;

using namespace bubblesim::cli_testing;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kExample = EXAMPLE_PLUGIN;

}  // namespace

TEST_CASE("the example plugin loads with --plugin and shows its origin and version") {
  Result r = run("--plugin '" + kExample + "' list");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "1f1b-warmup"));
  CHECK(contains(r.out, "plugin " + kExample + " (version 1.0.0)"));
  CHECK(contains(r.out, "built-in"));  // the built-ins are still there

  Result after = run("list --plugin '" + kExample + "'");  // the option may follow the subcommand
  CHECK(after.code == 0);
  CHECK(after.out == r.out);

  Result e = run("--plugin '" + kExample + "' explain 1f1b-warmup");
  CHECK(e.code == 0);
  CHECK(contains(e.out, "origin: plugin " + kExample + " (version 1.0.0)"));
  CHECK(contains(e.out, "warmup (integer, default derived)"));

  Result twice = run("--plugin '" + kExample + "' --plugin '" + kExample + "' list");
  CHECK(twice.code == 0);  // the same file named twice is loaded once
}

TEST_CASE("without the plugin its schedule is unknown") {
  Result r = run("explain 1f1b-warmup");
  CHECK(r.code == 2);
  CHECK(contains(r.err, "unknown schedule '1f1b-warmup'"));
}

TEST_CASE("BUBBLESIM_PLUGIN_PATH loads every .so of its directories") {
  Result r =
      run("list", "BUBBLESIM_PLUGIN_PATH='/nonexistent-is-not-used-because-empty-entries-skip:" +
                      std::string(EXAMPLE_PLUGIN_DIR) + "'");
  CHECK(r.code == 2);  // a listed directory that does not exist is an error
  CHECK(contains(r.err,
                 "BUBBLESIM_PLUGIN_PATH: '/nonexistent-is-not-used-because-empty-entries-skip' is "
                 "not a directory"));

  Result ok = run("list", "BUBBLESIM_PLUGIN_PATH='::" + std::string(EXAMPLE_PLUGIN_DIR) + "'");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "1f1b-warmup"));

  // The test plugins' folder holds broken plugins too: loading stops at the first, in sorted order.
  Result bad = run(
      "list", "BUBBLESIM_PLUGIN_PATH='" + fs::path(TEST_PLUGIN_good).parent_path().string() + "'");
  CHECK(bad.code == 2);
  // libtest_plugin_bad_contract.so comes first and loads; libtest_plugin_collides.so is refused.
  CHECK(bad.err == "error: plugin " + std::string(TEST_PLUGIN_collides) +
                       ": registration failed: a generator named '1f1b' is already registered "
                       "(from built-in)\n");
}

TEST_CASE("a plugin schedule runs in run and compare, and equals 1F1B at its default warm-up") {
  Result r =
      run("--plugin '" + kExample +
          "' run scenarios/quickstart.yaml --schedule 1f1b --schedule 1f1b-warmup --format json");
  REQUIRE(r.code == 0);
  auto report = nlohmann::json::parse(r.out);
  const auto& runs = report.at("results");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].at("schedule") == "1f1b");
  CHECK(runs[1].at("schedule") == "1f1b-warmup");
  CHECK(runs[0].at("simulation").at("makespan_s") == runs[1].at("simulation").at("makespan_s"));

  // More warm-up: more activations in flight on device 0 (min(warmup+1, m)), still a valid run.
  std::string scenario = (fs::temp_directory_path() / (fmt_name() + ".yaml")).string();
  std::string text = slurp(std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  text = text.substr(0, text.find("schedules:")) +
         "schedules: [1f1b, {name: 1f1b-warmup, params: {warmup: 11}}]\n";
  std::ofstream(scenario) << text;
  Result c = run("--plugin '" + kExample + "' compare '" + scenario + "'");
  CHECK(c.code == 0);
  CHECK(contains(c.out, "1f1b-warmup(warmup=11)"));
  Result j = run("--plugin '" + kExample + "' run '" + scenario + "' --format json");
  REQUIRE(j.code == 0);
  auto warm = nlohmann::json::parse(j.out).at("results");
  CHECK(warm[1].at("table").at("peak_activation_units") == doctest::Approx(12.0));
  CHECK(warm[0].at("table").at("peak_activation_units") == doctest::Approx(8.0));
  fs::remove(scenario);
}

TEST_CASE("check-plugin passes the example and reports a broken closed form") {
  Result ok = run("check-plugin '" + kExample + "'");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "1f1b-warmup: contract ok"));

  Result bad = run("check-plugin '" + std::string(TEST_PLUGIN_bad_contract) + "'");
  CHECK(bad.code == 1);
  CHECK(contains(bad.out, "test-bad-contract: "));
  CHECK(contains(
      bad.out, "FAIL test-bad-contract p=1 m=1: peak: closed-form peak activation 2 chunk units"));

  Result missing = run("check-plugin /no/such/plugin.so");
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "plugin /no/such/plugin.so: no such file"));
}

TEST_CASE("broken plugins are refused with their own message and exit code 2") {
  struct Case {
    std::string path;
    std::string message;
  };
  const std::string not_a_library =
      std::string(BUBBLESIM_SOURCE_DIR) + "/tests/plugins/not_a_library.so";
  const std::vector<Case> cases = {
      {TEST_PLUGIN_wrong_abi, "plugin ABI version 999, but this bubblesim loads ABI version 4"},
      {TEST_PLUGIN_wrong_version, "built against bubblesim '0.0.0-other', but this is bubblesim"},
      {not_a_library, "not a loadable shared library"},
      {TEST_PLUGIN_no_entry, "no entry point: the library does not export 'bubblesim_plugin_info'"},
      {TEST_PLUGIN_throws, "registration failed: the test plugin refuses to register"},
      {TEST_PLUGIN_collides,
       "registration failed: a generator named '1f1b' is already registered (from built-in)"},
  };
  for (const Case& c : cases) {
    for (const std::string& args :
         {"--plugin '" + c.path + "' list", "check-plugin '" + c.path + "'"}) {
      CAPTURE(args);
      Result r = run(args);
      CHECK(r.code == 2);
      CHECK(r.out.empty());
      CHECK(contains(r.err, "plugin " + c.path + ": " + c.message));
    }
  }
}

TEST_CASE("a refused plugin leaves the registry as it was") {
  bubblesim::Registry registry = bubblesim::builtin_registry();
  bubblesim::PluginSet plugins;
  const std::vector<std::string> before = registry.names();
  for (const char* path : {TEST_PLUGIN_throws, TEST_PLUGIN_collides, TEST_PLUGIN_wrong_abi}) {
    CAPTURE(path);
    CHECK_THROWS_AS(plugins.load(path, registry), bubblesim::InputError);
    CHECK(registry.names() == before);
  }
  CHECK(registry.find("test-throws-partial") == nullptr);
  CHECK(registry.origin("1f1b") == "built-in");
  CHECK(plugins.loaded().empty());

  const bubblesim::LoadedPlugin& good = plugins.load(TEST_PLUGIN_good, registry);
  CHECK(good.name == "test-good");
  CHECK(good.version == "0.1");
  CHECK(good.generators == std::vector<std::string>{"test-good"});
  REQUIRE(registry.find("test-good") != nullptr);
  CHECK(registry.origin("test-good") ==
        std::string("plugin ") + TEST_PLUGIN_good + " (version 0.1)");
  // The generator's code lives in the plugin, which stays loaded.
  bubblesim::GeneratorInput in;
  in.devices = 2;
  in.microbatches = 3;
  CHECK(registry.find("test-good")->generate(in).op_count() == 12);
}

TEST_CASE("Registry::add_from labels what it adds and is all or nothing") {
  using namespace bubblesim;
  auto make = [](const std::string& name) {
    return Generator{GeneratorInfo{name, "d", "straight", "s", {}},
                     [](const GeneratorInput&) { return Table{}; },
                     {}};
  };
  Registry registry = builtin_registry();
  const std::vector<std::string> before = registry.names();
  auto two_then_collide = [&make](Registrar& r) {
    r.add(make("first-new"));
    r.add(make("second-new"));
    r.add(make("gpipe"));  // taken: throws
  };
  CHECK_THROWS_WITH_AS(registry.add_from(two_then_collide, "plugin x.so (version 1)"),
                       "a generator named 'gpipe' is already registered (from built-in)",
                       std::invalid_argument);
  CHECK(registry.names() == before);
  CHECK(registry.find("first-new") == nullptr);
  CHECK(registry.find("second-new") == nullptr);

  registry.add_from([&make](Registrar& r) { r.add(make("first-new")); }, "plugin y.so (version 2)");
  CHECK(registry.origin("first-new") == "plugin y.so (version 2)");
  registry.add(make("later"));
  CHECK(registry.origin("later") == "built-in");  // the label does not leak past add_from
}
