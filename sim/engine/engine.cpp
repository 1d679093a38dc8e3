#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "sim/engine/duration_model.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/memory_accounting.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/op_graph.h"

namespace bubblesim {
namespace {

// Every check of the input that does not need the replay, before anything is built.
void check_input(const EngineInput& in) {
  const Table& table = *in.table;
  if (table.devices <= 0 || static_cast<std::int64_t>(table.device_ops.size()) != table.devices) {
    throw std::invalid_argument("the engine needs a validated table");
  }
  if (static_cast<std::int64_t>(in.stage_costs.size()) != table.stages) {
    throw std::invalid_argument(fmt::format("the engine needs costs for {} stages, got {}",
                                            table.stages, in.stage_costs.size()));
  }
  const auto devices = static_cast<std::size_t>(table.devices);
  if (!in.memory_budget.empty() && in.memory_budget.size() != devices) {
    throw std::invalid_argument("the memory budget needs one value per device");
  }
  if (!in.compute_slowdown.empty() && in.compute_slowdown.size() != devices) {
    throw std::invalid_argument("the compute slowdown needs one factor per device");
  }
  for (double k : in.compute_slowdown) {
    if (!(k > 0.0) || !std::isfinite(k))
      throw std::invalid_argument("a compute slowdown must be finite and > 0");
  }
}

std::string out_of_memory_text(const OutOfMemory& o) {
  if (o.host.empty()) {
    return fmt::format("out of memory on device {} at {} during {}: {} over the budget of {}",
                       o.device, o.time, o.op, o.over, o.budget);
  }
  return fmt::format(
      "out of host memory on '{}' at {} during {} of device {}: {} over the host capacity of {}",
      o.host, o.time, o.op, o.device, o.over, o.budget);
}

}  // namespace

struct Engine::State {
  EngineInput in;
  std::vector<EngineObserver*> observers;
  std::unique_ptr<const OpGraph> op_graph;  // built on the first run, reused by later ones

  explicit State(EngineInput input) : in(std::move(input)) {}
  SimulationResult run();
};

SimulationResult Engine::State::run() {
  check_input(in);
  const Table& table = *in.table;
  std::unique_ptr<NetworkModel> network = make_network_model(in);
  if (!op_graph) op_graph = std::make_unique<const OpGraph>(table, in.stage_costs);
  const OpGraph& graph = *op_graph;
  std::vector<Time> durations;
  if (in.durations) {
    in.durations->fill(graph, durations);
  } else {
    CostDurations(in.compute_slowdown).fill(graph, durations);
  }
  MemoryAccounting memory(graph, in.release, in.memory_budget, in.host_capacity,
                          network->hosts(table.devices), observers);
  std::unique_ptr<GradientSync> sync;
  if (in.sync && network->sync_port() != nullptr) {
    sync = std::make_unique<GradientSync>(*in.sync, table, *in.topology_network()->topology,
                                          *network->sync_port(), observers);
  }
  EventLoop loop(graph, durations, *network, memory, sync.get(), observers);
  loop.run();
  const ReplayTimes& times = loop.times();

  SimulationResult result;
  result.events = times.events;
  const auto devices = static_cast<std::size_t>(table.devices);
  result.timings.resize(devices);
  for (std::int32_t d = 0; d < table.devices; ++d) {
    auto& row = result.timings[static_cast<std::size_t>(d)];
    row.reserve(graph.device_end(d) - graph.device_begin(d));
    for (std::uint32_t n = graph.device_begin(d); n < graph.device_end(d); ++n) {
      const bool done = times.end[n] >= Time::zero();  // an op cut off by a deadlock has none
      row.push_back(done ? OpTiming{times.start[n], times.end[n]}
                         : OpTiming{Time::from_ps(-1), Time::from_ps(-1)});
    }
  }
  result.out_of_memory = memory.out_of_memory();
  const bool completed = times.completed == graph.size();
  if (!completed) {
    result.status = RunStatus::Deadlock;
    result.failure = loop.describe_deadlock();
  } else if (!result.out_of_memory.empty()) {
    result.status = RunStatus::OutOfMemory;
    result.failure = out_of_memory_text(result.out_of_memory.front());
  }
  result.metrics =
      compute_metrics(table, in.stage_costs, result.timings, memory.peaks(), times.exposed_comm);
  Metrics& m = result.metrics;
  m.peak_memory_time_per_device = memory.total_peak_time();
  m.offloaded_bytes_per_device = memory.offloaded();
  for (Bytes b : memory.offloaded()) m.offloaded_bytes += b;
  m.exposed_offload_per_device = times.exposed_offload;
  for (Time t : times.exposed_offload) m.exposed_offload += t;
  m.d2h_busy_per_device.assign(devices, Time::zero());
  m.h2d_busy_per_device.assign(devices, Time::zero());
  for (std::uint32_t n = 0; n < graph.size(); ++n) {
    if (times.end[n] < Time::zero() || graph.stream(n) == 0) continue;
    auto& busy = graph.stream(n) == 1 ? m.d2h_busy_per_device : m.h2d_busy_per_device;
    busy[static_cast<std::size_t>(graph.device(n))] += times.end[n] - times.start[n];
  }
  if (sync) sync->finish(m, completed);
  network->report(m, sync != nullptr);
  return result;
}

Engine::Engine(EngineInput input) : state_(std::make_unique<State>(std::move(input))) {
  if (state_->in.table == nullptr) throw std::invalid_argument("the engine needs a table");
}
Engine::~Engine() = default;

void Engine::add_observer(EngineObserver* observer) { state_->observers.push_back(observer); }

SimulationResult Engine::run() { return state_->run(); }

SimulationResult Engine::run(std::shared_ptr<const DurationModel> durations) {
  state_->in.durations = std::move(durations);
  return state_->run();
}

SimulationResult simulate(EngineInput input) {
  Engine engine(std::move(input));
  return engine.run();
}

std::string_view run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return "ok";
    case RunStatus::Deadlock:
      return "deadlock";
    case RunStatus::OutOfMemory:
      return "out_of_memory";
  }
  return "?";
}

}  // namespace bubblesim
