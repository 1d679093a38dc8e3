#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/engine/duration_model.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/iteration_end.h"
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
  if (in.iterations.count < 1)
    throw std::invalid_argument("the engine replays at least one iteration");
  if (!in.iterations.optimizer_step.empty() && in.iterations.optimizer_step.size() != devices) {
    throw std::invalid_argument("the optimizer step needs one time per device");
  }
  if (in.sync && !in.iterations.optimizer_step.empty()) {
    throw std::invalid_argument("with a gradient-sync plan the optimizer step comes from the plan");
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

  explicit State(EngineInput input) : in(std::move(input)) {}
  SimulationResult run();
  /// The result of the first iteration: timings, status and every per-iteration metric.
  void fill_first(const OpGraph& graph, const EventLoop& loop, const MemoryAccounting& memory,
                  SimulationResult& result) const;
};

void Engine::State::fill_first(const OpGraph& graph, const EventLoop& loop,
                               const MemoryAccounting& memory, SimulationResult& result) const {
  const Table& table = *in.table;
  const ReplayTimes& times = loop.times();
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
  if (times.completed != graph.size()) {
    result.status = RunStatus::Deadlock;
    result.failure = loop.describe_deadlock();
  } else if (!result.out_of_memory.empty()) {
    result.status = RunStatus::OutOfMemory;
    result.failure = out_of_memory_text(result.out_of_memory.front());
  }
  result.metrics =
      compute_metrics(table, in.stage_costs, result.timings, memory.peaks(), times.exposed_comm);
  Metrics& m = result.metrics;
  m.blocked_send_per_device = times.blocked_send;
  for (Time t : times.blocked_send) m.blocked_send = std::max(m.blocked_send, t);
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
}

SimulationResult Engine::State::run() {
  check_input(in);
  const Table& table = *in.table;
  const IterationPlan& plan = in.iterations;
  std::unique_ptr<NetworkModel> network = make_network_model(in);
  const OpGraph graph(table, in.stage_costs);
  const CostDurations cost_durations(in.compute_slowdown);
  const DurationModel& duration_model = in.durations ? *in.durations : cost_durations;
  const auto devices = static_cast<std::size_t>(table.devices);
  std::vector<Time> durations;
  SimulationResult result;
  ReplayStart start{{}, 0, in.p2p};
  std::vector<Time> completions;
  std::int32_t replays = 0;
  for (std::int32_t iteration = 0; iteration < plan.count; ++iteration) {
    duration_model.fill(graph, iteration, durations);
    MemoryAccounting memory(graph, in.release, in.memory_budget, in.host_capacity,
                            network->hosts(table.devices), observers);
    std::unique_ptr<GradientSync> sync;
    if (in.sync && network->sync_port() != nullptr) {
      sync = std::make_unique<GradientSync>(*in.sync, table, *in.topology_network()->topology,
                                            *network->sync_port(), observers);
    }
    EventLoop loop(graph, durations, *network, memory, sync.get(), observers, start);
    loop.run();
    ++replays;
    const bool completed = loop.times().completed == graph.size();
    Metrics scratch;
    Metrics& m = iteration == 0 ? result.metrics : scratch;
    if (iteration == 0) fill_first(graph, loop, memory, result);
    if (sync) sync->finish(m, completed);
    if (iteration == 0) network->report(m, sync != nullptr);
    if (result.status != RunStatus::Ok) break;  // a failed first iteration ends the replay
    // Each device is ready for the iteration's end after its last op and its gradient syncs.
    std::vector<Time> ready(devices, Time::zero());
    const ReplayTimes& times = loop.times();
    for (std::uint32_t n = 0; n < graph.size(); ++n) {
      auto& r = ready[static_cast<std::size_t>(graph.device(n))];
      r = std::max(r, times.end[n]);
    }
    if (sync) ready = m.sync.sync_end_per_device;
    const std::vector<Time>& step = in.sync ? in.sync->optimizer : plan.optimizer_step;
    const IterationBoundary boundary = end_iteration(plan, ready, step, iteration, observers);
    completions.push_back(boundary.completion);
    start.device_start = boundary.next_start;
    start.first_transfer_id = loop.next_transfer_id();
    // When every device starts the next iteration at the same instant and nothing in the replay
    // depends on absolute time or on the iteration, the next iteration is this one shifted: its
    // period is this iteration's completion, without replaying it.
    const bool shifted = std::all_of(boundary.next_start.begin(), boundary.next_start.end(),
                                     [&](Time t) { return t == boundary.completion; });
    if (shifted && iteration + 1 < plan.count && network->contention_free() &&
        !duration_model.varies_by_iteration() && !in.sync) {
      for (std::int32_t k = iteration + 1; k < plan.count; ++k)
        completions.push_back(completions.back() + boundary.completion);
      break;
    }
  }
  Metrics& m = result.metrics;
  m.iterations = static_cast<std::int32_t>(completions.size());
  m.replays = replays;
  if (!completions.empty()) {
    m.iteration_time = completions.size() >= 2
                           ? completions.back() - completions[completions.size() - 2]
                           : completions.back();
  }
  return result;
}

Engine::Engine(EngineInput input) : state_(std::make_unique<State>(std::move(input))) {
  if (state_->in.table == nullptr) throw std::invalid_argument("the engine needs a table");
}
Engine::~Engine() = default;

void Engine::add_observer(EngineObserver* observer) { state_->observers.push_back(observer); }

SimulationResult Engine::run() { return state_->run(); }

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
