// The Chrome trace and HTML writers on a real replay of a 4-stage 1F1B run, plus the memory
// timeline and the progress line they rely on.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "schedules/builtin_generators.h"
#include "sim/engine/memory_timeline.h"
#include "sim/report/chrome_trace_writer.h"
#include "sim/report/html_report.h"
#include "sim/report/progress.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

const std::string kScenario =
    std::string(BUBBLESIM_SOURCE_DIR) + "/tests/report/four_stage_1f1b.yaml";

struct Traced {
  Scenario scenario;
  ScheduleRun run;
  std::string json;
};

Traced traced_run(const std::string& path = kScenario, const std::string& schedule = "1f1b") {
  Registry registry = builtin_registry();
  Traced t{load_scenario_file(path, registry), {}, {}};
  ScheduleRequest request;
  for (const ScheduleRequest& r : t.scenario.schedules) {
    if (r.name == schedule) request = r;
  }
  REQUIRE(request.name == schedule);
  ChromeTraceWriter writer(t.scenario.stages);
  t.run = run_schedule(resolve(t.scenario), *registry.find(schedule), request, {&writer});
  TraceContext context;
  context.label = t.run.label;
  context.devices = t.run.table.devices;
  t.json = writer.to_json(context);
  return t;
}

// Trace timestamps are exact decimals of integer picoseconds: parse them back to integers.
std::int64_t ps_of(const nlohmann::json& v) { return std::llround(v.get<double>() * 1e6); }

}  // namespace

TEST_CASE("format_microseconds writes exact shortest decimals") {
  CHECK(format_microseconds(0) == "0");
  CHECK(format_microseconds(1'000'000) == "1");
  CHECK(format_microseconds(1'500'000) == "1.5");
  CHECK(format_microseconds(1) == "0.000001");
  CHECK(format_microseconds(18'522'000'000) == "18522");
  CHECK(format_microseconds(-2'250'000) == "-2.25");
}

TEST_CASE("trace_file_for_schedule inserts a file-name-safe label before the extension") {
  CHECK(trace_file_for_schedule("out/trace.json", "1f1b") == "out/trace.1f1b.json");
  CHECK(trace_file_for_schedule("trace.json", "interleaved-1f1b(chunks=2)") ==
        "trace.interleaved-1f1b_chunks_2.json");
  CHECK(trace_file_for_schedule("out.d/trace", "gpipe") == "out.d/trace.gpipe");
}

TEST_CASE("a 4-stage 1F1B trace is valid, non-overlapping and matches the table op for op") {
  Traced t = traced_run();
  REQUIRE(t.run.simulation.status == RunStatus::Ok);
  nlohmann::json trace = nlohmann::json::parse(t.json);  // throws on invalid JSON
  const nlohmann::json& events = trace.at("traceEvents");
  REQUIRE(events.is_array());
  CHECK(trace.at("otherData").at("schedule") == "1f1b");

  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::vector<std::tuple<std::int64_t, std::int64_t, std::string>>>
      slices;
  std::map<std::int64_t, int> flow_starts, flow_ends;
  std::map<int, std::int64_t> peak_total;  // pid -> largest counter total
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid"), tid = e.at("tid");
    if (ph == "M" && e.at("name") == "thread_name")
      thread_names[{pid, tid}] = e.at("args").at("name");
    if (ph == "M" && e.at("name") == "process_name") process_names[pid] = e.at("args").at("name");
    if (ph == "X")
      slices[{pid, tid}].emplace_back(ps_of(e.at("ts")), ps_of(e.at("dur")), e.at("name"));
    if (ph == "s") ++flow_starts[e.at("id").get<std::int64_t>()];
    if (ph == "f") {
      CHECK(e.at("bp") == "e");
      ++flow_ends[e.at("id").get<std::int64_t>()];
    }
    if (ph == "C") {
      std::int64_t total = e.at("args").at("total_bytes");
      peak_total[pid] = std::max(peak_total[pid], total);
    }
  }
  REQUIRE(process_names.size() == 4);
  for (int d = 0; d < 4; ++d) CHECK(process_names[d + 1] == "GPU " + std::to_string(d));

  // No two complete events of one thread overlap.
  for (auto& [key, list] : slices) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i) {
      INFO("pid " << key.first << " tid " << key.second << " at " << std::get<2>(list[i]));
      CHECK(std::get<0>(list[i - 1]) + std::get<1>(list[i - 1]) <= std::get<0>(list[i]));
    }
  }
  // Compute events: per device, in time order, exactly the table's ops with their replay times.
  std::size_t compute_events = 0;
  for (int d = 0; d < 4; ++d) {
    std::vector<std::string> names;
    for (const auto& [key, list] : slices) {
      if (key.first != d + 1 || thread_names[key] != "compute") continue;
      for (const auto& [ts, dur, name] : list) names.push_back(name);
    }
    const auto& ops = t.run.table.device_ops[static_cast<std::size_t>(d)];
    REQUIRE(names.size() == ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) CHECK(names[i] == to_string(ops[i]));
    compute_events += names.size();
    // Every counter sample's total stays within the replay's peak, and reaches it.
    CHECK(peak_total[d + 1] ==
          t.run.simulation.metrics.memory.peak_memory_per_device[static_cast<std::size_t>(d)]
              .count());
  }
  CHECK(compute_events == t.run.table.op_count());
  // One flow per cross-device edge: 1F1B on 4 stages with 8 microbatches sends 3 activations and
  // 3 gradients per microbatch.
  CHECK(flow_starts.size() == 48);
  CHECK(flow_ends.size() == 48);
  for (const auto& [id, n] : flow_starts) CHECK(flow_ends[id] == n);
}

TEST_CASE("topology transfers get link threads and extra lanes instead of overlapping slices") {
  Registry registry = builtin_registry();
  Scenario s = load_scenario_file(
      std::string(BUBBLESIM_SOURCE_DIR) + "/tests/report/topology_gpipe.yaml", registry);
  ChromeTraceWriter writer(s.stages);
  ScheduleRun run =
      run_schedule(resolve(s), *registry.find("gpipe"), s.schedules.front(), {&writer});
  REQUIRE(run.simulation.status == RunStatus::Ok);
  TraceContext context{run.label, run.table.devices, s.communication.topology.get(),
                       s.communication.placement};
  nlohmann::json events = nlohmann::json::parse(writer.to_json(context)).at("traceEvents");
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;
  for (const auto& e : events) {
    std::pair<int, int> key{e.at("pid"), e.at("tid")};
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      thread_names[key] = e.at("args").at("name");
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      process_names[key.first] = e.at("args").at("name");
    if (e.at("ph") == "X") slices[key].emplace_back(ps_of(e.at("ts")), ps_of(e.at("dur")));
  }
  CHECK(process_names[s.stages + 2] == "network");
  std::set<std::string> names;
  for (const auto& [key, name] : thread_names) names.insert(name);
  CHECK(names.count("gpu0->gpu1") == 1);
  CHECK(names.count("gpu1->gpu0") == 1);  // gradients flow back
  CHECK(names.count("send #2") == 1);     // transfers overlapped on a sender
  CHECK(names.count("gpu0->gpu1 #2") == 1);
  for (auto& [key, list] : slices) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i)
      CHECK(list[i - 1].first + list[i - 1].second <= list[i].first);
  }
}

TEST_CASE(
    "trace metadata comes first, in a stable (pid, tid) order, and the trace is byte-identical") {
  Traced a = traced_run();
  Traced b = traced_run();
  CHECK(a.json == b.json);
  nlohmann::json events = nlohmann::json::parse(a.json).at("traceEvents");
  bool metadata_done = false;
  std::vector<std::tuple<int, int, std::string>> order;
  for (const auto& e : events) {
    if (e.at("ph") != "M") {
      metadata_done = true;
      continue;
    }
    CHECK_FALSE(metadata_done);  // no metadata after the first non-metadata event
    order.emplace_back(e.at("pid"), e.at("tid"), e.at("name"));
  }
  auto sorted = order;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return std::tie(std::get<0>(x), std::get<1>(x)) < std::tie(std::get<0>(y), std::get<1>(y));
  });
  CHECK(order == sorted);
  REQUIRE(order.size() >= 4);
  CHECK(std::get<2>(order[0]) == "process_name");
  CHECK(std::get<2>(order[1]) == "process_sort_index");
  CHECK(std::get<2>(order[2]) == "thread_name");
  CHECK(std::get<2>(order[3]) == "thread_sort_index");
}

TEST_CASE("the memory timeline starts at static memory and ends with no activations") {
  Registry registry = builtin_registry();
  Scenario s = load_scenario_file(kScenario, registry);
  MemoryTimeline memory(s.stages);
  ScheduleRun run =
      run_schedule(resolve(s), *registry.find("1f1b"), s.schedules.front(), {&memory});
  for (std::int32_t d = 0; d < s.stages; ++d) {
    const auto& samples = memory.samples(d);
    REQUIRE(samples.size() > 2);
    CHECK(samples.front().time == Time::zero());
    CHECK(samples.front().activation == Bytes::zero());
    CHECK(samples.front().total == s.costs.profile.stages.front().static_memory);
    CHECK(samples.back().activation == Bytes::zero());
    for (std::size_t i = 1; i < samples.size(); ++i) CHECK(samples[i - 1].time <= samples[i].time);
    CHECK(memory.peak_total(d) ==
          run.simulation.metrics.memory.peak_memory_per_device[static_cast<std::size_t>(d)]);
  }
}

TEST_CASE("the HTML report is self-contained and embeds every op of every schedule") {
  Registry registry = builtin_registry();
  Scenario s = load_scenario_file(std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/quickstart.yaml",
                                  registry);
  std::vector<std::unique_ptr<MemoryTimeline>> timelines;
  ScenarioRunHooks hooks;
  hooks.observers = [&](std::size_t index) {
    if (timelines.size() <= index) timelines.resize(index + 1);
    timelines[index] = std::make_unique<MemoryTimeline>(s.stages);
    return std::vector<EngineObserver*>{timelines[index].get()};
  };
  ScenarioRun result = run_scenario(s, registry, {}, hooks);
  REQUIRE(result.runs.size() == 2);
  std::vector<const MemoryTimeline*> memory;
  for (const auto& t : timelines) memory.push_back(t.get());
  std::string html = render_html_report(s, result, memory);
  // Nothing fetched: no URL at all, no src or href attribute, no CSS import.
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // The embedded data has one entry per op that ran.
  std::size_t begin = html.find("id=\"bubblesim-data\">");
  REQUIRE(begin != std::string::npos);
  begin = html.find('>', begin) + 1;
  std::size_t end = html.find("</script>", begin);
  nlohmann::json data = nlohmann::json::parse(html.substr(begin, end - begin));
  REQUIRE(data.at("runs").size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& r = data.at("runs")[i];
    CHECK(r.at("label") == result.runs[i].label);
    CHECK(r.at("ops").size() == result.runs[i].table.op_count());
    CHECK(r.at("table_ops") == result.runs[i].table.op_count());
    CHECK(r.at("memory").size() == 8);
    CHECK(r.at("budget").size() == 8);
  }
  // The summary table names both schedules.
  CHECK(html.find("<td>gpipe</td>") != std::string::npos);
  CHECK(html.find("<td>1f1b</td>") != std::string::npos);
  // Deterministic.
  CHECK(html == render_html_report(s, result, memory));
}

/// Everything written to `f` so far (a tmpfile standing for stderr).
static std::string file_text(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  int c = 0;
  while ((c = std::fgetc(f)) != EOF) s += static_cast<char>(c);
  return s;
}

TEST_CASE("the progress reporter writes only when enabled and erases its line") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  auto contents = [&] { return file_text(f); };
  {
    ProgressReporter quiet("run", 3, f, false);
    quiet.step("gpipe");
    quiet.finish();
  }
  CHECK(contents().empty());
  {
    ProgressReporter shown("run", 2, f, true, std::chrono::seconds(0));
    shown.step("gpipe");
    shown.step("1f1b");
    shown.detail("local search 0/10");  // the first status is shown
    shown.detail("local search 5/10");  // within 100 ms of the last: not redrawn
  }
  std::string out = contents();
  CHECK(out.find("[1/2] run: gpipe") != std::string::npos);
  CHECK(out.find("[2/2] run: 1f1b") != std::string::npos);
  CHECK(out.find("[2/2] run: 1f1b - local search 0/10") != std::string::npos);
  CHECK(out.find("local search 5/10") == std::string::npos);
  CHECK(out.back() == '\r');  // the destructor erased the line and returned to its start
  std::fclose(f);
  // A file is not a terminal: the default constructor stays quiet.
  std::FILE* g = std::tmpfile();
  ProgressReporter auto_detect("run", 1, g);
  CHECK_FALSE(auto_detect.enabled());
  std::fclose(g);
}

TEST_CASE("progress: nothing for work shorter than the delay, then the time it has taken") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  auto contents = [&] { return file_text(f); };
  {
    ProgressReporter quick("run", 1, f, true, std::chrono::seconds(10));
    quick.step("1f1b");
    quick.detail("simulating on the cluster");
  }
  CHECK(contents().empty());  // done within its delay: no line drawn, none to erase
  {
    // A phase that says nothing new for over a second: the clock redraws it with its time.
    ProgressReporter slow("run", 1, f, true, std::chrono::seconds(0));
    slow.step("1f1b");
    slow.detail("setting up");
    for (int i = 0; i < 50 && contents().find("setting up (1 s)") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(contents().find("[1/1] run: 1f1b - setting up (1 s)") != std::string::npos);
  std::fclose(f);
}

TEST_CASE("--trace-max-events: the first events in time are kept and the trace says what was cut") {
  Registry registry = builtin_registry();
  const Scenario s = load_scenario_file(kScenario, registry);
  ScheduleRequest request;
  for (const ScheduleRequest& r : s.schedules)
    if (r.name == "1f1b") request = r;
  const ResolvedScenario resolved = resolve(s);
  ChromeTraceWriter whole(s.stages), bounded(s.stages, 5);
  const ScheduleRun run =
      run_schedule(resolved, *registry.find("1f1b"), request, {&whole, &bounded});
  TraceContext context;
  context.label = run.label;
  context.devices = run.table.devices;
  CHECK_FALSE(whole.truncation().has_value());
  REQUIRE(bounded.truncation().has_value());
  const TraceTruncation& t = *bounded.truncation();
  CHECK(t.kept == 5);
  CHECK(t.dropped > 0);
  const nlohmann::json full = nlohmann::json::parse(whole.to_json(context));
  const nlohmann::json cut = nlohmann::json::parse(bounded.to_json(context));
  CHECK_FALSE(full["otherData"].contains("truncated"));
  CHECK(cut["otherData"]["truncated"]["events_kept"] == 5);
  CHECK(cut["otherData"]["truncated"]["events_dropped"] == t.dropped);
  // Every kept slice starts before the cut, and the kept slices are the whole trace's first ones.
  std::size_t slices = 0;
  for (const auto& e : cut["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    CHECK(ps_of(e["ts"]) <= t.cut.ps());
  }
  CHECK(slices >= 1);
  CHECK(slices <= 5);
}
