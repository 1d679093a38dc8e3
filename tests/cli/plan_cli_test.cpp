// `bubblesim plan` through the real binary: its reports, the scenarios it emits run alone with
// `bubblesim run` in the same order, the flags form, its input errors, and Llama-3-70B on 256
// H100s (the command's acceptance case: at least 20 ranked layouts and a reason for every
// rejected family; its speed is measured by tests/bench/plan_bench.cpp, not here).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

std::size_t longest_line(const std::string& text) {
  std::size_t longest = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  return longest;
}

}  // namespace

TEST_CASE("plan: the reports, and every ranked layout's scenario run alone in the same order") {
  TempDir dir;
  fs::create_directories(dir.path / "layouts");
  Result r =
      run("plan tests/plan/small_plan.yaml --replays 8 --per-layout 2 --time-budget 0 "
          "--format json -o " +
          dir.file("plan.json") + " --html " + dir.file("plan.html") + " --emit " +
          dir.file("layouts"));
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(dir.file("plan.json")));
  const auto& ranked = j["ranked"];
  REQUIRE(ranked.size() >= 6);
  CHECK(j["counts"]["candidates"] == 132);
  CHECK(j["counts"]["rejected"]["divisibility"] == 12);
  // At most 2 replays per parallel layout (--per-layout).
  std::map<std::string, int> per_family;
  for (const auto& c : ranked) CHECK(++per_family[c["family"].get<std::string>()] <= 2);
  // The emitted files, run alone, give the same iteration times in the same order.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir.path / "layouts")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == ranked.size());
  double previous = 0;
  for (std::size_t k = 0; k < files.size(); ++k) {
    CAPTURE(files[k]);
    Result alone = run("run '" + files[k].string() + "' --format json");
    REQUIRE(alone.code == 0);
    const nlohmann::json a = nlohmann::json::parse(alone.out);
    const double t = a["results"][0]["simulation"]["iteration_time_s"].get<double>();
    CHECK(t == ranked[k]["iteration_time_s"].get<double>());
    CHECK(t >= previous);
    previous = t;
  }
  // The HTML page is self-contained and draws the comparison chart, one row per ranked layout.
  const std::string html = slurp(dir.file("plan.html"));
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  std::size_t rows = 0;
  for (std::size_t at = html.find("class=\"cmp-row\""); at != std::string::npos;
       at = html.find("class=\"cmp-row\"", at + 1))
    ++rows;
  CHECK(rows == ranked.size());
  CHECK(r.err.find("wrote " + dir.file("plan.html")) != std::string::npos);
}

TEST_CASE("plan: text fits the terminal; Markdown and CSV carry the same candidates") {
  Result text = run("plan tests/plan/small_plan.yaml --replays 4 --time-budget 0");
  REQUIRE(text.code == 0);
  CHECK(longest_line(text.out) <= 100);
  CHECK(text.out.find("Ranked by the replay") != std::string::npos);
  CHECK(text.out.find("#1 beats #2 by ") != std::string::npos);
  CHECK(text.out.find("tp4 pp4 (no dp)    divisibility") != std::string::npos);
  Result md = run("plan tests/plan/small_plan.yaml --replays 4 --time-budget 0 --format md");
  REQUIRE(md.code == 0);
  CHECK(md.out.rfind("## bubblesim plan: small", 0) == 0);
  CHECK(md.out.find("| rank | layout | variant | schedule |") != std::string::npos);
  Result csv = run("plan tests/plan/small_plan.yaml --replays 4 --time-budget 0 --format csv");
  REQUIRE(csv.code == 0);
  // The header and one row per candidate.
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 1 + 132);
  CHECK(csv.out.rfind("candidate,family,label,tp,pp,cp,ep,zero,micro_batch_size,", 0) == 0);
}

TEST_CASE("plan: the job as flags, and what is refused") {
  Result flags =
      run("plan --model llama3-8b --gpu h100-sxm --nodes 1 --global-batch 16 "
          "--seq-len 1024 --replays 3 --time-budget 0");
  CHECK(flags.code == 0);
  CHECK(flags.out.find("llama3-8b on 8 h100-sxm GPUs (8 per node), global batch 16 x 1024") !=
        std::string::npos);
  Result both = run("plan tests/plan/small_plan.yaml --model llama3-8b");
  CHECK(both.code == 2);
  CHECK(both.err.find("either as a plan file or as flags") != std::string::npos);
  Result missing = run("plan --model llama3-8b --gpu h100-sxm");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("missing --nodes (or --topology), --global-batch, --seq-len") !=
        std::string::npos);
  Result onto_input = run("plan tests/plan/small_plan.yaml -o tests/plan/small_plan.yaml");
  CHECK(onto_input.code == 2);
}

TEST_CASE("plan: Llama-3-70B on 256 H100s ranks at least 20 layouts and says why the rest fail") {
  TempDir dir;
  Result r = run("plan scenarios/plan/llama3-70b-256.yaml --time-budget 0 --format json -o " +
                 dir.file("plan.json") + " --html " + dir.file("plan.html"));
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(dir.file("plan.json")));
  CHECK(j["gpus"] == 256);
  CHECK(j["global_batch"] == 512);
  CHECK(j["seq_len"] == 8192);
  CHECK(j["ranked"].size() >= 20);
  std::set<std::string> why;
  for (const auto& f : j["rejected_families"]) {
    CHECK(!f["reason"].get<std::string>().empty());
    why.insert(f["why"].get<std::string>());
  }
  CHECK(why.count("memory") == 1);
  // Every ranked layout uses the 256 GPUs and fits the budget.
  for (const auto& c : j["ranked"]) {
    const auto& l = c["layout"];
    CHECK(l["tp"].get<int>() * l["pp"].get<int>() * l["dp"].get<int>() == 256);
    CHECK(c["peak_memory_bytes"].get<double>() <= c["memory_budget_bytes"].get<double>());
  }
  CHECK(slurp(dir.file("plan.html")).find("class=\"cmp-row\"") != std::string::npos);
}
