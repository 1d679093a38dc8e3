// `optimized` with offload against PipeOffload's own interleaved schedule with offload:
//   build/bin/bubblesim_bench --benchmark_filter=OptimizerPipeOffload
// One benchmark per row of tests/data/pipeoffload_interleaved.csv, the output of
// tests/bench/peers/pipeoffload_interleaved.py (group_interleaved_1f1b with cpu_offload, two chunks
// per device, the first chunk offloaded; commit 39f2c186 of the zero-bubble repository). Each row
// gives p, m, per-chunk T_F, T_B, T_W, the delay, PipeOffload's k, its interleave group, its stage
// span and its peak activation memory in chunk activations (its own count and the count under our
// memory semantics). The optimizer runs with offload allowed (no recompute: the peer does not
// recompute here), straight, V and interleaved placement (the best is kept), the limit the
// peer's peak under our semantics (`peak_events` chunks, M_B = 2 chunks), one M_B copied in
// k (T_F + T_B + T_W) of a device (the peer's own definition of k, scaled to a device's two
// chunks), 20000 evaluations, seed 1 (deterministic).
//
// Counters: span_units (the best placement), straight_units, v_units, interleaved_units (the
// peer's own placement: stages d and p + d on device d), peer_units, and
// at_or_below (1 when span_units <= peer_units). `/own` runs at the peer's own (lower or equal)
// peak count instead; `/pair` gives every copy twice the time: the peer's two GPUs of a pair
// alternate their D2H and H2D copies on one link, so per GPU and direction it moves one chunk per
// two copy times, where our model gives every device its own D2H and H2D engines.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/optimizer/optimize.h"
#include "sim/units/time.h"

namespace {

using namespace bubblesim;

struct PeerRow {
  int p = 0, m = 0;
  std::int64_t f = 0, b = 0, w = 0, c = 0;  // per chunk, in units
  double k = 0;
  int group = 0;
  double span = 0;
  int peak_own = 0, peak_events = 0;
  std::string label;
};

std::vector<PeerRow> peer_rows() {
  std::ifstream in(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/pipeoffload_interleaved.csv");
  std::vector<PeerRow> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) c.push_back(cell);
    if (c.size() < 11 || c[8].empty()) continue;  // the peer refused the shape
    PeerRow r{std::stoi(c[0]),  std::stoi(c[1]),  std::stoll(c[2]), std::stoll(c[3]),
              std::stoll(c[4]), std::stoll(c[5]), std::stod(c[6]),  std::stoi(c[7]),
              std::stod(c[8]),  std::stoi(c[9]),  std::stoi(c[10]), {}};
    r.label = "p" + c[0] + "/m" + c[1] + (r.f == 1 && r.b == 1 ? "/unit" : "/unequal") + "/k" +
              c[6] + "/g" + c[7];
    rows.push_back(r);
  }
  return rows;
}

constexpr std::int64_t kChunkBytes = 500;  // one chunk's activation; M_B = 2 chunks

/// The row's problem in `placement`: straight stages hold two chunks (durations doubled), V and
/// interleaved stages one; the limit `peak_chunks` chunk activations; copies of a stage's
/// activation take k (T_F + T_B + T_W) of that stage, times `copy_factor`.
optimizer::Problem problem(const PeerRow& r, optimizer::PlacementKind placement, int peak_chunks,
                           double copy_factor) {
  const std::int64_t unit = Time::from_seconds(1e-3).ps();
  const std::int64_t chunks = placement == optimizer::PlacementKind::Straight ? 2 : 1;
  optimizer::Problem pr;
  pr.set_shape(r.p, r.m, placement);
  pr.set_uniform_comm(r.c * unit);
  const auto copy = static_cast<std::int64_t>(
      copy_factor * r.k * static_cast<double>(chunks * (r.f + r.b + r.w) * unit));
  for (int s = 0; s < pr.stages; ++s) {
    pr.forward_ps.push_back(chunks * r.f * unit);
    pr.backward_ps.push_back(chunks * r.b * unit);
    pr.weight_ps.push_back(chunks * r.w * unit);
    pr.memory.activation_bytes.push_back(chunks * kChunkBytes);
    pr.memory.weight_grad_bytes.push_back(chunks * kChunkBytes);  // the peer frees all at W
    pr.memory_ops.d2h_ps.push_back(copy);
    pr.memory_ops.h2d_ps.push_back(copy);
    pr.memory_ops.recompute_ps.push_back(pr.forward_ps.back());
    pr.memory_ops.stage_input_bytes.push_back(0);
  }
  pr.memory.limit_bytes.assign(static_cast<std::size_t>(r.p), peak_chunks * kChunkBytes);
  pr.memory_ops.allow_offload = true;
  return pr;
}

double run_units(const PeerRow& r, optimizer::PlacementKind placement, int peak_chunks,
                 double copy_factor) {
  optimizer::OptimizeSettings s;
  s.method = optimizer::Method::Heuristic;
  s.time_limit_s = 600;
  s.budget_evals = 20000;
  s.seed = 1;
  const auto out = optimizer::optimize(problem(r, placement, peak_chunks, copy_factor), s);
  if (!out.feasible) return -1;
  return static_cast<double>(out.cost) / static_cast<double>(Time::from_seconds(1e-3).ps());
}

void register_pipeoffload() {
  for (const PeerRow& r : peer_rows()) {
    for (const bool own : {false, true}) {
      if (own && r.peak_own == r.peak_events) continue;
      for (const bool pair : {false, true}) {
        const std::string name =
            "OptimizerPipeOffload/" + r.label + (own ? "/own" : "") + (pair ? "/pair" : "");
        benchmark::RegisterBenchmark(
            name.c_str(),
            [r, own, pair](benchmark::State& state) {
              const int peak = own ? r.peak_own : r.peak_events;
              const double factor = pair ? 2.0 : 1.0;
              double straight = 0, v = 0, interleaved = 0;
              for (auto _ : state) {
                straight = run_units(r, optimizer::PlacementKind::Straight, peak, factor);
                v = run_units(r, optimizer::PlacementKind::V, peak, factor);
                interleaved = run_units(r, optimizer::PlacementKind::Interleaved, peak, factor);
              }
              double best = -1;
              for (const double u : {straight, v, interleaved})
                if (u >= 0 && (best < 0 || u < best)) best = u;
              state.counters["straight_units"] = straight;
              state.counters["v_units"] = v;
              state.counters["interleaved_units"] = interleaved;
              state.counters["span_units"] = best;
              state.counters["peer_units"] = r.span;
              state.counters["at_or_below"] = best >= 0 && best <= r.span + 1e-9 ? 1 : 0;
            })
            ->Unit(benchmark::kSecond)
            ->Iterations(1);
      }
    }
  }
}

const bool pipeoffload_registered = (register_pipeoffload(), true);

}  // namespace
