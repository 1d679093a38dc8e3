// Generator time over a (p, m) grid for every registered generator that accepts the input.
// from-file reads a table instead of generating one: it reads 1F1B's table of the same (p, m),
// written as bubblesim CSV to a temporary file.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bench_support.h"
#include "schedules/table_csv.h"

namespace {

using namespace bubblesim;

void Generate(benchmark::State& state, const std::string& name) {
  GeneratorInput in = bench::input(static_cast<int>(state.range(0)),
                                   static_cast<int>(state.range(1)), bench::unit_cost());
  const Generator* g = bench::registry().find(name);
  std::filesystem::path file;
  if (name == "from-file") {
    const Table table = bench::registry().find("1f1b")->generate(in);
    // Its `path` has no default (it named no file: "parameter 'path' has no value").
    file = std::filesystem::temp_directory_path() /
           ("bubblesim_bench_from_file_" + std::to_string(::getpid()) + ".csv");
    std::ofstream(file) << write_table_csv(table);
    in.params = ParamValues::defaults(g->info.params);
    in.params.set("path", file.string());
    in.params.set("format", std::string("bubblesim-csv"));
  }
  struct Remove {
    std::filesystem::path file;
    ~Remove() {
      std::error_code ec;
      if (!file.empty()) std::filesystem::remove(file, ec);
    }
  } remove{file};
  try {
    (void)g->generate(in);
  } catch (const ScheduleConstraintError& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    Table t = g->generate(in);
    benchmark::DoNotOptimize(t.device_ops.data());
  }
  state.counters["tables/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

const bool registered = [] {
  for (const std::string& name : bench::registry().names()) {
    if (name == "optimized") continue;  // a search, not a rule: optimizer_bench.cpp measures it
    benchmark::RegisterBenchmark(("Generate/" + name).c_str(), Generate, name)
        ->ArgsProduct({{8, 32, 128}, {64, 512}})
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
