// Runs the real `bubblesim` binary and checks its output and exit codes.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_support.h"
#include "sim/report/regression.h"

namespace fs = std::filesystem;

using namespace bubblesim::cli_testing;

TEST_CASE("--version and --help") {
  Result v = run("--version");
  CHECK(v.code == 0);
  CHECK(v.out.rfind("bubblesim ", 0) == 0);
  Result h = run("--help");
  CHECK(h.code == 0);
  for (const char* cmd : {"run", "compare", "table", "list", "explain", "validate"})
    CHECK(h.out.find(cmd) != std::string::npos);
}

TEST_CASE("run quickstart prints the three levels") {
  Result r = run("run scenarios/quickstart.yaml");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("formula") != std::string::npos);
  CHECK(r.out.find("table (no comm)") != std::string::npos);
  CHECK(r.out.find("simulation") != std::string::npos);
  CHECK(r.out.find("1f1b") != std::string::npos);
}

TEST_CASE("the JSON report has the documented layout and is deterministic apart from run") {
  Result a = run("run scenarios/quickstart.yaml --format json");
  Result b = run("run scenarios/quickstart.yaml --format json");
  REQUIRE(a.code == 0);
  auto ja = nlohmann::json::parse(a.out);
  auto jb = nlohmann::json::parse(b.out);
  CHECK(ja["schema_version"] == 2);
  CHECK(ja["scenario"]["name"] == "quickstart");
  REQUIRE(ja["results"].size() == 2);
  const auto& r = ja["results"][1];
  CHECK(r["schedule"] == "1f1b");
  CHECK(r["status"] == "ok");
  for (const char* k : {"bubble_ratio", "peak_activation_units"}) CHECK(r["formula"].contains(k));
  for (const char* k : {"makespan_s", "bubble_ratio"}) CHECK(r["table"].contains(k));
  for (const char* k : {"makespan_s", "stage_span_max_s", "bubble_ratio", "bubble_ratio_span",
                        "peak_activation_bytes", "peak_activation_bytes_per_device",
                        "peak_activation_units", "exposed_comm_s"}) {
    CHECK(r["simulation"].contains(k));
  }
  for (const char* k : {"wall_time_s", "events", "events_per_s"}) CHECK(r["run"].contains(k));
  // 1F1B of the quickstart is the ZB paper's 1.5B row with m = 24: bubble rate 0.2431.
  CHECK(r["simulation"]["bubble_ratio_span"].get<double>() ==
        doctest::Approx(0.2431).epsilon(2e-4));
  ja.erase("run");
  jb.erase("run");
  for (auto* j : {&ja, &jb})
    for (auto& x : (*j)["results"]) x.erase("run");
  CHECK(ja.dump() == jb.dump());
}

TEST_CASE("--schedule restricts the run and an unknown one is bad input") {
  Result r = run("run scenarios/quickstart.yaml --schedule 1f1b --format csv");
  CHECK(r.code == 0);
  CHECK(r.out.find(",gpipe,") == std::string::npos);
  CHECK(r.out.find(",1f1b,") != std::string::npos);
  Result bad = run("run scenarios/quickstart.yaml --schedule 1fib");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown schedule '1fib'; did you mean '1f1b'?") != std::string::npos);
}

TEST_CASE("-o writes the report to a file") {
  fs::path out = fs::temp_directory_path() / (fmt_name() + ".json");
  Result r = run("run scenarios/quickstart.yaml --format json -o '" + out.string() + "'");
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  auto j = nlohmann::json::parse(slurp(out.string()));
  CHECK(j["results"].size() == 2);
  fs::remove(out);
}

TEST_CASE("table prints the device x slot grid") {
  Result r = run("table scenarios/quickstart.yaml --schedule 1f1b");
  CHECK(r.code == 0);
  CHECK(r.out.find("dev 0 |") != std::string::npos);
  CHECK(r.out.find("dev 7 |") != std::string::npos);
}

TEST_CASE("list and explain") {
  Result l = run("list");
  CHECK(l.code == 0);
  CHECK(l.out.find("gpipe") != std::string::npos);
  Result e = run("explain 1f1b");
  CHECK(e.code == 0);
  CHECK(e.out.rfind("1f1b: ", 0) == 0);
  Result bad = run("explain gpip");
  CHECK(bad.code == 2);
  CHECK(bad.err == "error: unknown schedule 'gpip'; did you mean 'gpipe'? (known: " +
                       std::string("") + bad.err.substr(bad.err.find("(known: ") + 8));
}

TEST_CASE("every file of the error corpus fails with its expected first line and exit code 2") {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(source("tests/errors"))) {
    if (entry.path().extension() != ".expected") continue;
    fs::path input = entry.path();
    input.replace_extension("");  // NAME.yaml.expected -> NAME.yaml, NAME.expected -> NAME
    if (input.extension() != ".yaml") input += ".yaml";
    std::string expected = slurp(entry.path().string());
    while (!expected.empty() && (expected.back() == '\n' || expected.back() == '\r'))
      expected.pop_back();
    std::string rel = "tests/errors/" + input.filename().string();
    CAPTURE(rel);
    // sweep_*.yaml are sweep files; everything else is a scenario.
    const bool sweep = input.filename().string().rfind("sweep_", 0) == 0;
    const std::string out = (fs::temp_directory_path() / (fmt_name() + ".csv")).string();
    Result r = run(sweep ? "sweep " + rel + " -o '" + out + "' --jobs 1" : "run " + rel);
    fs::remove(out);
    CHECK(r.code == 2);
    std::string first = r.err.substr(0, r.err.find('\n'));
    CHECK(first == expected);
    ++checked;
  }
  CHECK(checked >= 40);
}

TEST_CASE("a stepped ring over 4096 ranks: refused one flow at a time, answered by class") {
  // 8190 steps of 4096 flows: over kMaxCollectiveFlows one by one; by class one step laid out.
  Result off = run("run tests/scale/dp_4096_stepped_ring.yaml --symmetry off");
  CHECK(off.code == 2);
  // NCCL's channels: each of the 512 nodes' rings runs 8 intra-node edges and 8 node-crossing
  // edges, one per NIC (data_parallel.channels: nics): 8192 flows a step.
  CHECK(off.err.find("a ring collective over 4096 ranks is 8190 steps of 8192 flows") !=
        std::string::npos);
  Result by_class = run("run tests/scale/dp_4096_stepped_ring.yaml --format json");
  REQUIRE(by_class.code == 0);
  const nlohmann::json j = nlohmann::json::parse(by_class.out);
  const nlohmann::json& flows = j["results"][0]["run"]["flows"];
  CHECK(flows["mode"] == "symmetric");
  // DDP (the engine without ZeRO) reduces its gradients in two buckets, the 1 MiB one of the
  // parameters defined first last: 8190 launches of the ring's step each, each launch standing
  // for its 8192 flows.
  CHECK(flows["started"].get<std::int64_t>() == 2 * 8190LL * 8192);
  CHECK(flows["laid_out"].get<std::int64_t>() == 8192);
}

TEST_CASE("a missing scenario file is bad input") {
  Result r = run("run no/such/file.yaml");
  CHECK(r.code == 2);
  CHECK(r.err.find("no/such/file.yaml") != std::string::npos);
}

TEST_CASE("run --format md prints Markdown tables of the three levels") {
  Result r = run("run scenarios/quickstart.yaml --format md");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("## bubblesim: quickstart\n", 0) == 0);
  for (const char* h :
       {"### Formula", "### Table (scenario costs, no communication)", "### Simulation"}) {
    CHECK(r.out.find(h) != std::string::npos);
  }
  CHECK(r.out.find("| schedule | status | makespan s |") != std::string::npos);
  CHECK(r.out.find("| 1f1b | ok |") != std::string::npos);
}

TEST_CASE("the CSV report has one row per scenario and schedule") {
  Result r = run("run scenarios/quickstart.yaml --format csv");
  CHECK(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("scenario,schedule,label,status,", 0) == 0);
  CHECK(lines[1].rfind("quickstart,gpipe,gpipe,ok,", 0) == 0);
  CHECK(lines[2].rfind("quickstart,1f1b,1f1b,ok,", 0) == 0);
}

TEST_CASE("table --format torch-csv exports and from-file imports it back to the same replay") {
  fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  for (const char* schedule : {"gpipe", "1f1b"}) {
    CAPTURE(schedule);
    Result csv = run(std::string("table scenarios/quickstart.yaml --format torch-csv --schedule ") +
                     schedule);
    REQUIRE(csv.code == 0);
    CHECK(csv.out.rfind("0F0,0F1,", 0) == 0);
    std::ofstream(dir / "exported.csv") << csv.out;
    // The quickstart with its schedule replaced by the exported file (path relative to the
    // scenario).
    std::string yaml = slurp(source("scenarios/quickstart.yaml"));
    yaml = yaml.substr(0, yaml.find("schedules:")) +
           "schedules: [{name: from-file, params: {path: exported.csv, dialect: current}}]\n";
    std::ofstream(dir / "imported.yaml") << yaml;
    Result a =
        run(std::string("table scenarios/quickstart.yaml --format csv --schedule ") + schedule);
    Result b =
        run("table '" + (dir / "imported.yaml").string() + "' --format csv --schedule from-file");
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(a.out.find("device,position,kind,stage,microbatch,backward_stage,backward_microbatch,"
                     "start_s,end_s") != std::string::npos);
    CHECK(a.out == b.out);  // same ops, same idealized start and end times
  }
  Result bad =
      run("table scenarios/quickstart.yaml --format torch-csv --dialect 2025 --schedule 1f1b");
  CHECK(bad.code == 2);
  fs::remove_all(dir);
}

TEST_CASE("regress exits 1 when a bubble ratio worsens past the tolerance and 0 when unchanged") {
  fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  std::string base = (dir / "base.json").string(), same = (dir / "same.json").string(),
              worse = (dir / "worse.json").string(), bench = (dir / "bench.json").string();
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + base + "'").code == 0);
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + same + "'").code == 0);
  // A slower link: the same schedules with more exposed communication and larger bubbles.
  std::string yaml = slurp(source("scenarios/quickstart.yaml"));
  yaml.replace(yaml.find("delay: 0.601ms"), 14, "delay: 3ms");
  std::ofstream(dir / "slow.yaml") << yaml;
  REQUIRE(run("run '" + (dir / "slow.yaml").string() + "' --format json -o '" + worse + "'").code ==
          0);

  Result ok = run("regress --baseline '" + base + "' --current '" + same + "' --benchmark-json '" +
                  bench + "'");
  CHECK(ok.code == 0);
  CHECK(ok.out.find("no regression") != std::string::npos);
  auto entries = nlohmann::json::parse(slurp(bench));
  REQUIRE(entries.is_array());
  bool found = false;
  for (const auto& e : entries) {
    CHECK(e.contains("name"));
    CHECK(e.contains("unit"));
    CHECK(e["value"].is_number());
    if (e["name"] == "quickstart/1f1b/simulation.bubble_ratio") found = true;
  }
  CHECK(found);

  // By default the headline metrics (iteration time, peak memory) are judged; --all judges all.
  Result headline =
      run("regress --baseline '" + base + "' --current '" + worse + "' --tolerance 1%");
  CHECK(headline.code == 1);
  CHECK(headline.out.find("| 1f1b | simulation.iteration_time_s |") != std::string::npos);
  CHECK(headline.out.find("| 1f1b | simulation.bubble_ratio |") == std::string::npos);
  CHECK(headline.out.find("other metrics changed (not judged") != std::string::npos);
  // The two reports are of different scenarios (the delay): said, naming the key.
  CHECK(headline.err.find("warning: the reports are of different scenarios") != std::string::npos);
  CHECK(headline.out.find("differ in communication.delay_s") != std::string::npos);
  Result bad =
      run("regress --baseline '" + base + "' --current '" + worse + "' --tolerance 1% --all");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("| 1f1b | simulation.bubble_ratio |") != std::string::npos);
  // --fail-on: none never fails, any also fails on differing scenarios alone.
  CHECK(run("regress --baseline '" + base + "' --current '" + worse + "' --fail-on none").code ==
        0);
  CHECK(run("regress --baseline '" + base + "' --current '" + worse +
            "' --tolerance 1000% --fail-on any")
            .code == 1);
  CHECK(run("regress --baseline '" + base + "' --current '" + same + "' --fail-on any").code == 0);
  Result fail_on = run("regress --baseline '" + base + "' --current '" + same + "' --fail-on all");
  CHECK(fail_on.code == 2);
  CHECK(fail_on.err.find("--fail-on: 'all' is not allowed") != std::string::npos);
  CHECK(bad.out.find("regression") != std::string::npos);
  // A tolerance wide enough for the change passes.
  CHECK(run("regress --baseline '" + base + "' --current '" + worse + "' --tolerance 1000%").code ==
        0);

  // Bad input: not JSON, or an unknown schema.
  std::ofstream(dir / "broken.json") << "{\"schema_version\": 1, ";
  Result broken =
      run("regress --baseline '" + base + "' --current '" + (dir / "broken.json").string() + "'");
  CHECK(broken.code == 2);
  CHECK(broken.err.find("not valid JSON") != std::string::npos);
  // A number beyond a double is the parser's out_of_range, not a parse error: it was exit 3.
  std::ofstream(dir / "huge.json") << "{\"schema_version\": 1e999999, \"results\": []}";
  Result huge =
      run("regress --baseline '" + base + "' --current '" + (dir / "huge.json").string() + "'");
  CHECK(huge.code == 2);
  CHECK(huge.err.find("huge.json: not valid JSON") != std::string::npos);
  // A metric of the wrong type is refused with its place (it was skipped: exit 0), a result that
  // is not an object too (it was exit 3); a value lost (null) in an ok result is a regression.
  auto edited = [&](const std::string& file, auto&& change) {
    nlohmann::json report = nlohmann::json::parse(slurp(base));
    change(report);
    std::ofstream((dir / file).string()) << report.dump();
    return run("regress --baseline '" + base + "' --current '" + (dir / file).string() + "' --all");
  };
  Result text = edited(
      "text.json", [](nlohmann::json& r) { r["results"][0]["simulation"]["makespan_s"] = "fast"; });
  CHECK(text.code == 2);
  CHECK(
      text.err.find("results[0].simulation.makespan_s: expected a number or null, got \"fast\"") !=
      std::string::npos);
  Result number = edited("number.json", [](nlohmann::json& r) { r["results"][0] = 1; });
  CHECK(number.code == 2);
  CHECK(number.err.find("results[0]: expected an object") != std::string::npos);
  Result lost = edited("lost.json", [](nlohmann::json& r) {
    r["results"][0]["simulation"]["makespan_s"] = nullptr;
  });
  CHECK(lost.code == 1);
  CHECK(lost.out.find("value lost in the current report (regression): gpipe: "
                      "simulation.makespan_s") != std::string::npos);
  std::ofstream(dir / "v99.json") << "{\"schema_version\": 99, \"results\": []}";
  Result v99 =
      run("regress --baseline '" + base + "' --current '" + (dir / "v99.json").string() + "'");
  CHECK(v99.code == 2);
  CHECK(v99.err.find("unknown report schema_version 99") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("regress: one 5% op-time change is one flag per schedule") {
  fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  const std::string base = (dir / "base.json").string(), slower = (dir / "slower.json").string();
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + base + "'").code == 0);
  std::string yaml = slurp(source("scenarios/quickstart.yaml"));
  yaml.replace(yaml.find("forward: 18.522ms"), 17, "forward: 19.448ms");  // T_F + 5%
  std::ofstream(dir / "slower.yaml") << yaml;
  REQUIRE(
      run("run '" + (dir / "slower.yaml").string() + "' --format json -o '" + slower + "'").code ==
      0);
  const nlohmann::json b = nlohmann::json::parse(slurp(base));
  const nlohmann::json c = nlohmann::json::parse(slurp(slower));
  const bubblesim::RegressionReport report = bubblesim::compare_reports(b, c, 0.01);
  std::map<std::string, int> flags;
  for (const bubblesim::MetricComparison& m : report.metrics)
    flags[m.schedule] += m.regression ? 1 : 0;
  REQUIRE(flags.size() == 2);
  CHECK(flags["gpipe"] == 1);
  CHECK(flags["1f1b"] == 1);
  // Every derived metric (makespan, samples/s, the table's makespan, ...) would flag under --all.
  int all_flags = 0;
  for (const bubblesim::MetricComparison& m :
       bubblesim::compare_reports(b, c, 0.01, "b", "c", {}, true).metrics)
    all_flags += m.regression ? 1 : 0;
  CHECK(all_flags > 2);
  // The warning names the changed key (and the recompute time, T_F by default).
  CHECK(report.scenario_differences ==
        std::vector<std::string>{"costs.forward_s", "costs.recompute_s"});
  fs::remove_all(dir);
}

TEST_CASE("the shipped CI baseline matches the quickstart") {
  Result r =
      run("regress --baseline scenarios/ci/baseline.json --current scenarios/ci/baseline.json");
  CHECK(r.code == 0);
  fs::path now = fs::temp_directory_path() / (fmt_name() + ".json");
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + now.string() + "'").code == 0);
  CHECK(
      run("regress --baseline scenarios/ci/baseline.json --current '" + now.string() + "'").code ==
      0);
  fs::remove(now);
}

// ---- memory hierarchy (docs/memory.md) ----

namespace {

nlohmann::json run_json(const std::string& args, int expected_code = 0) {
  Result r = run("run " + args + " --format json");
  REQUIRE(r.code == expected_code);
  return nlohmann::json::parse(r.out);
}

std::string write_temp(const std::string& text) {
  fs::path p = fs::temp_directory_path() / (fmt_name() + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

// The README quotes k to two decimals, truncated: the exact values are 1.7052 and 1.4042.
std::string two_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", std::floor(v * 100.0) / 100.0);
  return buf;
}

}  // namespace

TEST_CASE("PipeOffload's k for the README example: 1.70 (h = s = 4096) and 1.40 (h = 5120)") {
  nlohmann::json j = run_json("scenarios/memory/pipeoffload_k.yaml");
  CHECK(two_decimals(j["analysis"]["offload_k_formula"].get<double>()) == "1.70");
  CHECK(j["analysis"]["offload_k_formula"].get<double>() ==
        doctest::Approx(10.0 / (3.0 * 7 * 4096) * 220e12 / 15e9));
  CHECK(j["analysis"]["offload_hidden"] == false);
  CHECK(j["analysis"]["offload_k"].get<double>() > 1.0);
  std::string text = slurp(source("scenarios/memory/pipeoffload_k.yaml"));
  text.replace(text.find("hidden: 4096"), 12, "hidden: 5120");
  text.replace(text.find("heads: 32"), 9, "heads: 40");
  std::string path = write_temp(text);
  nlohmann::json k2 = run_json("'" + path + "'");
  fs::remove(path);
  CHECK(two_decimals(k2["analysis"]["offload_k_formula"].get<double>()) == "1.40");
}

TEST_CASE("full offload: hidden when k < 1, exposed when k > 1; passes are reported") {
  nlohmann::json hidden = run_json("scenarios/memory/offload_hidden.yaml");
  nlohmann::json exposed = run_json("scenarios/memory/offload_exposed.yaml");
  CHECK(hidden["analysis"]["offload_hidden"] == true);
  CHECK(exposed["analysis"]["offload_hidden"] == false);
  const nlohmann::json& h = hidden["results"][0];
  const nlohmann::json& e = exposed["results"][0];
  CHECK(h["simulation"]["makespan_s"].get<double>() <=
        h["table"]["makespan_s"].get<double>() * 1.01);
  CHECK(h["simulation"]["offloaded_bytes"].get<std::int64_t>() > 0);
  CHECK(h["simulation"]["peak_activation_bytes_per_device"][0].get<std::int64_t>() * 2 <=
        800000000);
  CHECK(e["simulation"]["makespan_s"].get<double>() > e["table"]["makespan_s"].get<double>());
  CHECK(e["simulation"]["exposed_offload_s"].get<double>() > 0.0);
  REQUIRE(h["passes"].size() == 1);
  CHECK(h["passes"][0]["name"] == "offload");
  CHECK(h["passes"][0]["count_per_device"][0].get<int>() > 0);
  for (const char* key :
       {"peak_memory_time_s_per_device", "d2h_busy_s_per_device", "h2d_utilization_per_device",
        "exposed_offload_s_per_device", "offloaded_bytes_per_device"}) {
    CHECK(h["simulation"].contains(key));
  }
  Result text = run("run scenarios/memory/offload_exposed.yaml");
  CHECK(text.out.find("exposed offload ms") != std::string::npos);
  CHECK(text.out.find("offload pass (full)") != std::string::npos);
}

TEST_CASE("full recompute scenario: busy grows by m T_F and the pass is reported") {
  nlohmann::json j = run_json("scenarios/memory/recompute.yaml");
  const nlohmann::json& s = j["results"][0]["simulation"];
  // Every backward redoes its stage's forward (T_R = T_F = 1 ms): 4 stages x 8 microbatches.
  CHECK(s["recompute_s"].get<double>() == doctest::Approx(4 * 8 * 1e-3));
  // Without a model the stage is the checkpointed unit: device 0's first backward starts holding
  // the 4 stage inputs of 1F1B's warm-up and rebuilds the rest of its activation (100 - 10 MB).
  CHECK(s["peak_activation_bytes_per_device"][0] == 4 * 10000000 + (100000000 - 10000000));
  CHECK(j["results"][0]["passes"][0]["name"] == "recompute");
  CHECK(j["results"][0]["passes"][0]["in_backward"] == true);
}

TEST_CASE("a budget below the need is out_of_memory: exit 1, or 0 with --allow-oom") {
  nlohmann::json j = run_json("scenarios/memory/oom.yaml", 1);
  const nlohmann::json& r = j["results"][0];
  CHECK(r["status"] == "out_of_memory");
  REQUIRE(r["simulation"]["out_of_memory"].size() >= 1);
  const nlohmann::json& o = r["simulation"]["out_of_memory"][0];
  CHECK(o["device"] == 0);
  CHECK(o["time_s"].get<double>() == doctest::Approx(2e-3));
  CHECK(o["over_bytes"] == 50000000);
  Result text = run("run scenarios/memory/oom.yaml");
  CHECK(text.code == 1);
  CHECK(text.out.find("out of memory on device 0") != std::string::npos);
  CHECK(run("run scenarios/memory/oom.yaml --allow-oom").code == 0);
}

TEST_CASE("memory keys: offloading without a host, unknown keys and bad values are input errors") {
  std::string base = slurp(source("scenarios/memory/offload_hidden.yaml"));
  auto error_for = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    std::string path = write_temp(text);
    Result r = run("run '" + path + "'");
    fs::remove(path);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK(error_for(", bandwidth: 400GB/s", "")
            .find("cannot offload: fixed-delay communication has no host") != std::string::npos);
  CHECK(error_for("prefetch: 1", "prefech: 1").find("did you mean 'prefetch'") !=
        std::string::npos);
  CHECK(error_for("policy: full", "policy: half").find("full") != std::string::npos);
  CHECK(error_for("prefetch: 1", "prefetch: 0").find("memory.offload.prefetch") !=
        std::string::npos);
  CHECK(error_for("prefetch: 1", "stages: [0]").find("only used with 'policy: selective'") !=
        std::string::npos);
  std::string no_host = base;
  no_host.replace(no_host.find("communication: {model: fixed-delay, delay: 0ms}"), 47,
                  "topology: " + source("tests/topologies/data/no_host.yaml"));
  no_host.replace(no_host.find(", bandwidth: 400GB/s"), 20, "");
  no_host.replace(no_host.find("stages: 8"), 9, "stages: 2");
  std::string path = write_temp(no_host);
  Result r = run("run '" + path + "'");
  fs::remove(path);
  CHECK(r.code == 2);
  CHECK(r.err.find("no host vertex is reachable from GPU") != std::string::npos);
}

TEST_CASE("run --trace writes one trace per schedule and --html one report") {
  fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  Result r = run("run scenarios/quickstart.yaml --trace '" + (dir / "trace.json").string() +
                 "' --html '" + (dir / "report.html").string() + "'");
  CHECK(r.code == 0);
  // No progress line (stderr is not a terminal); one line per file written.
  CHECK(r.err == "wrote " + (dir / "trace.gpipe.json").string() + " (Chrome trace of gpipe)\n" +
                     "wrote " + (dir / "trace.1f1b.json").string() + " (Chrome trace of 1f1b)\n" +
                     "wrote " + (dir / "report.html").string() + " (HTML report)\n");
  CHECK_FALSE(fs::exists(dir / "trace.json"));
  for (const char* label : {"gpipe", "1f1b"}) {
    fs::path trace = dir / (std::string("trace.") + label + ".json");
    REQUIRE(fs::exists(trace));
    nlohmann::json j = nlohmann::json::parse(slurp(trace.string()));
    CHECK(j.at("otherData").at("schedule") == label);
  }
  CHECK(slurp((dir / "report.html").string()).find("bubblesim-data") != std::string::npos);
  // One schedule: the file name as given.
  Result one = run("run scenarios/quickstart.yaml --schedule 1f1b --trace '" +
                   (dir / "one.json").string() + "'");
  CHECK(one.code == 0);
  CHECK(fs::exists(dir / "one.json"));
  CHECK(run("-q run scenarios/quickstart.yaml --schedule 1f1b --trace '" +
            (dir / "quiet.json").string() + "'")
            .err.empty());
  // --trace-combined: one file, a process group per schedule, flows still unique.
  Result both = run("run scenarios/quickstart.yaml --trace-combined --trace '" +
                    (dir / "both.json").string() + "'");
  CHECK(both.code == 0);
  CHECK(both.err.find("both.json (Chrome trace, a process group per schedule: 2)") !=
        std::string::npos);
  nlohmann::json j = nlohmann::json::parse(slurp((dir / "both.json").string()));
  CHECK(j.at("otherData").at("schedules") == nlohmann::json::array({"gpipe", "1f1b"}));
  std::set<std::string> processes;
  std::map<std::int64_t, int> flow_starts;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("name") == "process_name") processes.insert(e.at("args").at("name"));
    if (e.at("ph") == "s") ++flow_starts[e.at("id").get<std::int64_t>()];
  }
  CHECK(processes.count("gpipe: GPU 0") == 1);
  CHECK(processes.count("1f1b: GPU 7") == 1);
  CHECK(processes.size() == 16);
  for (const auto& [id, n] : flow_starts) CHECK(n == 1);
  fs::remove_all(dir);
}

TEST_CASE("small frictions: a misspelled command, a GPU without its variant, the metric lists") {
  Result cmd = run("plna scenarios/quickstart.yaml");
  CHECK(cmd.code == 2);
  CHECK(cmd.err.rfind("error: unknown command 'plna'; did you mean 'plan'? (commands: run,", 0) ==
        0);
  Result none = run("frobnicate");
  CHECK(none.code == 2);
  CHECK(none.err.find("unknown command 'frobnicate' (commands: ") != std::string::npos);
  CHECK(run("--help").code == 0);  // an option alone is no command

  TempDir dir;
  std::ofstream(dir.file("h100.yaml"))
      << "name: h100\npipeline: {stages: 2}\ntraining: {global_batch: 8}\n"
         "model: {preset: llama3-8b, seq_len: 2048}\ncluster: {gpu: {preset: h100}}\n"
         "schedules: [1f1b]\n";
  Result gpu = run("run " + dir.file("h100.yaml"));
  CHECK(gpu.code == 2);
  CHECK(gpu.err.find(":5:25: error: cluster.gpu.preset: 'h100' is not allowed; did you mean "
                     "'h100-sxm'?") != std::string::npos);

  // The plot's columns, one a line, are the metrics `list --metrics` marks plottable, and the
  // sweep plot takes each of them.
  Result plot = run("list --plot-metrics");
  REQUIRE(plot.code == 0);
  Result metrics = run("list --metrics", "COLUMNS=100");
  REQUIRE(metrics.code == 0);
  std::string joined = metrics.out;  // a long first line wraps, indented by 4
  for (std::size_t at; (at = joined.find("\n    ")) != std::string::npos;)
    joined.replace(at, 5, " ");
  std::istringstream lines(plot.out);
  int count = 0;
  for (std::string column; std::getline(lines, column); ++count) {
    CAPTURE(column);
    CHECK(joined.find("plot: " + column + ")") != std::string::npos);
  }
  CHECK(count > 10);
  CHECK(plot.out.find("bubble_ratio_span\n") != std::string::npos);
  CHECK(metrics.out.find("simulation.iteration_time_s (s, lower is better; plot: "
                         "iteration_time_s)") != std::string::npos);
  std::istringstream metric_lines(metrics.out);
  for (std::string line; std::getline(metric_lines, line);) CHECK(line.size() <= 100);
}
