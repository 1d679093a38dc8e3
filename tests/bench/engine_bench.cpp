// Engine replay rate over generated tables, for every replay path, against a floor.
//
// Rows (p in {8, 32, 128} x m in {1024, 16384}, 1F1B unless named):
//   Replay/list-fixed-delay     fixed delay: list scheduling (the automatic choice)
//   Replay/loop-fixed-delay     the same replay forced through the event loop
//   Replay/list-idealized       no communication cost (the table level of a run)
//   Replay/list-topology        a ring of GPUs, one link per neighbour and direction: no
//                               contention, list scheduling
//   Replay/loop-contention      the GPUs of DGX-like nodes (NVSwitch, NICs): a GPU's
//                               activations and gradients share its uplink; forced through
//                               the event loop
//   Replay/auto-contention      the same, as Auto replays it: list scheduling checked per
//                               replay (counter list = 1 when no two transfers met on a link)
//   Replay/interleaved-contention[-loop]  interleaved (v = 2) on the DGX-like nodes, Auto (and
//                               forced through the event loop)
//   Floor                       the minimal list-scheduling loop below, same table
//   Peer/zero-bubble            the table and costs of tests/bench/peers/zero_bubble_add_time.py
//                               (1F1B, F = 1, B = 2, no W, a 0.1 delay; units: ms here)
//   Peer/minpp                  the table and costs of tests/bench/peers/minpp_1f1b.py (1F1B,
//                               F = 1, B = 2, no communication)
// Counters: ops/s and events/s (CPU time), bytes/op (peak heap of one replay over its ops),
// x_floor (this row's CPU time per replay over the floor's, measured in the same process on the
// same table right after the row, so machine load cancels out as far as it can).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <memory>

#include "bench_support.h"
#include "sim/engine/list_replay.h"
#include "topologies/topology_builders.h"

namespace {

using namespace bubblesim;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The floor: what any list-scheduling replay of a table must do, written as plainly as
// possible. Ops are F, B and W of one replica; each op looks up its inputs' end times in a
// (kind, stage, microbatch) array; start = max(device free, inputs, plus the delay across
// devices); end = start + duration. Sweeps over the devices, alternating direction, until every
// op ran. No memory, no metrics, no checks, no result beyond the makespan.
class Floor {
 public:
  Floor(const Table& t, const std::vector<StageCost>& costs, Time delay) : t_(t) {
    const auto stages = static_cast<std::size_t>(t.stages);
    m_ = static_cast<std::size_t>(t.microbatches);
    for (std::size_t s = 0; s < stages; ++s) {
      const StageCost& c = costs[s];
      dur_.push_back(
          {c.forward.ps(), c.backward_input.ps(), c.backward_weight.ps(), c.full_backward().ps()});
      const std::int32_t dev = t.placement.device_of_stage[0][s];
      const bool from_prev = s > 0 && t.placement.device_of_stage[0][s - 1] != dev;
      const bool from_next = s + 1 < stages && t.placement.device_of_stage[0][s + 1] != dev;
      delay_prev_.push_back(from_prev ? delay.ps() : 0);
      delay_next_.push_back(from_next ? delay.ps() : 0);
    }
    split_ = false;
    for (const auto& ops : t.device_ops) {
      for (const Op& op : ops) split_ = split_ || op.kind == OpKind::Weight;
    }
  }

  std::int64_t run() {
    const std::size_t stages = dur_.size();
    end_.assign(3 * stages * m_, -1);
    const auto devices = t_.device_ops.size();
    cursor_.assign(devices, 0);
    free_.assign(devices, 0);
    std::size_t left = 0;
    for (const auto& ops : t_.device_ops) left += ops.size();
    std::int64_t makespan = 0;
    for (bool forward = true; left > 0; forward = !forward) {
      std::size_t done = 0;
      for (std::size_t k = 0; k < devices; ++k) {
        const std::size_t d = forward ? k : devices - 1 - k;
        const auto& ops = t_.device_ops[d];
        std::size_t c = cursor_[d];
        std::int64_t free = free_[d];
        for (; c < ops.size(); ++c) {
          const Op& op = ops[c];
          const auto s = static_cast<std::size_t>(op.stage);
          const auto j = static_cast<std::size_t>(op.microbatch);
          std::int64_t ready = 0, dur = 0;
          std::size_t slot = 0;
          if (op.kind == OpKind::Forward) {
            if (s > 0) {
              const std::int64_t e = end_[(s - 1) * m_ + j];
              if (e < 0) break;
              ready = e + delay_prev_[s];
            }
            dur = dur_[s][0];
            slot = s * m_ + j;
          } else if (op.kind == OpKind::Backward) {
            const std::int64_t f = end_[s * m_ + j];
            if (f < 0) break;
            ready = f;
            if (s + 1 < stages) {
              const std::int64_t e = end_[(stages + s + 1) * m_ + j];
              if (e < 0) break;
              ready = std::max(ready, e + delay_next_[s]);
            }
            dur = split_ ? dur_[s][1] : dur_[s][3];
            slot = (stages + s) * m_ + j;
          } else {
            const std::int64_t b = end_[(stages + s) * m_ + j];
            if (b < 0) break;
            ready = b;
            dur = dur_[s][2];
            slot = (2 * stages + s) * m_ + j;
          }
          free = std::max(free, ready) + dur;
          end_[slot] = free;
        }
        done += c - cursor_[d];
        cursor_[d] = c;
        free_[d] = free;
        makespan = std::max(makespan, free);
      }
      if (done == 0) return -1;  // a deadlock
      left -= done;
    }
    return makespan;
  }

 private:
  const Table& t_;
  std::size_t m_ = 0;
  bool split_ = false;
  std::vector<std::array<std::int64_t, 4>> dur_;  // F, B input, W, full B
  std::vector<std::int64_t> delay_prev_, delay_next_;
  std::vector<std::int64_t> end_, free_;
  std::vector<std::size_t> cursor_;
};

enum class Path {
  ListFixedDelay,
  LoopFixedDelay,
  ListIdealized,
  ListTopology,
  LoopContention,
  AutoContention
};

const Time kDelay = Time::from_seconds(1e-4);

struct Case {
  Table table;
  std::vector<StageCost> costs;
  Topology topology;
  std::vector<VertexId> gpus;
};

// Tables and topologies are built once per shape and kept for the whole run of the suite.
const Case& case_for(const std::string& schedule, int p, int m, int chunks, Path path) {
  static std::map<std::tuple<std::string, int, int, int, int>, std::unique_ptr<Case>> cache;
  auto key = std::make_tuple(schedule, p, m, chunks, static_cast<int>(path));
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  auto c = std::make_unique<Case>();
  GeneratorInput in = bench::input(p, m, bench::unit_cost());
  if (chunks > 1) in.params.set("chunks", std::int64_t{chunks});
  c->table = bench::registry().find(schedule)->generate(in);
  c->costs = in.costs.for_table(c->table.chunks);
  if (path == Path::ListTopology) {
    // A ring of GPUs, each pair of neighbours on its own 50GB/s full-duplex link.
    for (int d = 0; d < p; ++d)
      c->gpus.push_back(c->topology.add_vertex("gpu" + std::to_string(d), VertexKind::Gpu));
    for (int d = 0; d < p; ++d) {
      c->topology.add_link(c->gpus[static_cast<std::size_t>(d)],
                           c->gpus[static_cast<std::size_t>((d + 1) % p)],
                           Bandwidth::bytes_per_second(50e9), Time::from_seconds(2e-6));
    }
  } else if (path == Path::LoopContention || path == Path::AutoContention) {
    ClusterParams params;
    params.nodes = std::max(1, p / 8);
    params.node.gpus = std::min(p, 8);
    c->topology = build_cluster(params);
    c->gpus = c->topology.gpus();
  }
  return *cache.emplace(key, std::move(c)).first->second;
}

EngineInput input_for(const Case& c, Path path) {
  static const auto scratch = std::make_shared<ReplayScratch>();  // as a run's replays share one
  EngineInput in;
  in.scratch = scratch;
  in.table = &c.table;
  in.stage_costs = c.costs;
  switch (path) {
    case Path::ListFixedDelay:
      in.network = FixedDelayNetwork{kDelay};
      break;
    case Path::LoopFixedDelay:
      in.network = FixedDelayNetwork{kDelay};
      in.path = ReplayPath::EventLoop;
      break;
    case Path::ListIdealized:
      in.network = NoCostNetwork{};
      break;
    case Path::ListTopology:
      in.network = TopologyNetwork{&c.topology, c.gpus};
      break;
    case Path::LoopContention:
      in.network = TopologyNetwork{&c.topology, c.gpus};
      in.path = ReplayPath::EventLoop;
      break;
    case Path::AutoContention:
      in.network = TopologyNetwork{&c.topology, c.gpus};
      break;
  }
  return in;
}

double floor_seconds_per_replay(const Case& c, Time delay) {
  Floor floor(c.table, c.costs, delay);
  benchmark::DoNotOptimize(floor.run());  // warm
  const int reps = 3;
  const double t0 = thread_cpu_seconds();
  for (int i = 0; i < reps; ++i) benchmark::DoNotOptimize(floor.run());
  return (thread_cpu_seconds() - t0) / reps;
}

void replay(benchmark::State& state, Path path, const std::string& schedule, int chunks) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const Case& c = case_for(schedule, p, m, chunks, path);
  const bool expect_list = path != Path::LoopFixedDelay && path != Path::LoopContention;
  const bool either = path == Path::AutoContention;  // the engine decides per replay
  bool listed = false;
  std::uint64_t events = 0;
  std::size_t peak_heap = 0;
  double cpu = 0.0;
  for (auto _ : state) {
    const std::size_t before = bench::heap_in_use();
    bench::reset_heap_peak();
    const double t0 = thread_cpu_seconds();
    SimulationResult r = simulate(input_for(c, path));
    cpu += thread_cpu_seconds() - t0;
    peak_heap = std::max(peak_heap, bench::heap_peak() - before);
    if (r.status != RunStatus::Ok) state.SkipWithError("replay did not finish");
    if (!either && r.list_scheduled != expect_list)
      state.SkipWithError("not the replay path this row names");
    listed = r.list_scheduled;
    events += r.events;
    benchmark::DoNotOptimize(r.metrics.makespan);
  }
  const double ops = static_cast<double>(c.table.op_count());
  const double iterations = static_cast<double>(state.iterations());
  state.counters["ops/s"] = benchmark::Counter(ops * iterations, benchmark::Counter::kIsRate);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["ops"] = ops;
  if (either) state.counters["list"] = listed ? 1.0 : 0.0;  // 1: no two transfers met
  state.counters["bytes/op"] = static_cast<double>(peak_heap) / ops;
  const Time delay = path == Path::ListIdealized ? Time::zero() : kDelay;
  state.counters["x_floor"] = cpu / iterations / floor_seconds_per_replay(c, delay);
}

void floor_row(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const Case& c = case_for("1f1b", p, m, 1, Path::ListFixedDelay);
  Floor floor(c.table, c.costs, kDelay);
  for (auto _ : state) {
    const std::int64_t makespan = floor.run();
    if (makespan < 0) state.SkipWithError("the floor loop did not finish");
    benchmark::DoNotOptimize(makespan);
  }
  const double ops = static_cast<double>(c.table.op_count());
  state.counters["ops/s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
}

// The peers' tables: what their drivers replay, and the makespan (ms) they print, to compare.
void peer_row(benchmark::State& state, bool with_delay) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  StageCost cost = bench::unit_cost();
  cost.backward_weight = Time::zero();
  GeneratorInput gen = bench::input(p, m, cost);
  const Table table = bench::registry().find("1f1b")->generate(gen);
  EngineInput in;
  in.table = &table;
  in.stage_costs = gen.costs.for_table(table.chunks);
  in.scratch = std::make_shared<ReplayScratch>();
  if (with_delay) in.network = FixedDelayNetwork{kDelay};
  double makespan_ms = 0.0;
  for (auto _ : state) {
    SimulationResult r = simulate(in);
    if (r.status != RunStatus::Ok || !r.list_scheduled) state.SkipWithError("not a list replay");
    makespan_ms = r.metrics.makespan.seconds() * 1e3;
  }
  const double ops = static_cast<double>(table.op_count());
  state.counters["ops/s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
  state.counters["ops"] = ops;
  state.counters["makespan"] = makespan_ms;
}
void PeerZeroBubble(benchmark::State& s) { peer_row(s, true); }
void PeerMinpp(benchmark::State& s) { peer_row(s, false); }

void ListFixedDelay(benchmark::State& s) { replay(s, Path::ListFixedDelay, "1f1b", 1); }
void LoopFixedDelay(benchmark::State& s) { replay(s, Path::LoopFixedDelay, "1f1b", 1); }
void ListIdealized(benchmark::State& s) { replay(s, Path::ListIdealized, "1f1b", 1); }
void ListTopology(benchmark::State& s) { replay(s, Path::ListTopology, "1f1b", 1); }
void LoopContention(benchmark::State& s) { replay(s, Path::LoopContention, "1f1b", 1); }
void AutoContention(benchmark::State& s) { replay(s, Path::AutoContention, "1f1b", 1); }
void InterleavedContention(benchmark::State& s) {
  replay(s, Path::AutoContention, "interleaved-1f1b", 2);
}
void InterleavedContentionLoop(benchmark::State& s) {
  replay(s, Path::LoopContention, "interleaved-1f1b", 2);
}
void Small(benchmark::State& s) { replay(s, Path::ListFixedDelay, "1f1b", 1); }

void grid(benchmark::internal::Benchmark* b) {
  b->ArgsProduct({{8, 32, 128}, {1024, 16384}})->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(Small)->Name("Replay/small")->Args({4, 8})->Unit(benchmark::kMicrosecond);
BENCHMARK(ListFixedDelay)->Name("Replay/list-fixed-delay")->Apply(grid);
BENCHMARK(LoopFixedDelay)->Name("Replay/loop-fixed-delay")->Apply(grid);
BENCHMARK(ListIdealized)->Name("Replay/list-idealized")->Apply(grid);
BENCHMARK(ListTopology)->Name("Replay/list-topology")->Apply(grid);
BENCHMARK(LoopContention)->Name("Replay/loop-contention")->Apply(grid);
BENCHMARK(AutoContention)->Name("Replay/auto-contention")->Apply(grid);
BENCHMARK(InterleavedContention)
    ->Name("Replay/interleaved-contention")
    ->Args({128, 4096})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(InterleavedContentionLoop)
    ->Name("Replay/interleaved-contention-loop")
    ->Args({128, 4096})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(floor_row)->Name("Floor")->Apply(grid);
BENCHMARK(PeerZeroBubble)
    ->Name("Peer/zero-bubble")
    ->ArgsProduct({{8, 32}, {1024, 16384}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(PeerMinpp)->Name("Peer/minpp")->ArgsProduct({{8, 32}, {256, 1024}});
