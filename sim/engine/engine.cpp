#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/engine/duration_model.h"
#include "sim/engine/engine_component.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/iteration_end.h"
#include "sim/engine/list_replay.h"
#include "sim/engine/memory_accounting.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/op_graph.h"
#include "sim/engine/op_index.h"

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
  if (in.iterations.count < 1)
    throw std::invalid_argument("the engine replays at least one iteration");
  if (!in.iterations.optimizer_step.empty() && in.iterations.optimizer_step.size() != devices) {
    throw std::invalid_argument("the optimizer step needs one time per device");
  }
  if (in.sync && !in.iterations.optimizer_step.empty()) {
    throw std::invalid_argument("with a gradient-sync plan the optimizer step comes from the plan");
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

// What either replay of one iteration produced, before the metrics.
struct Outcome {
  OpTimings timings;
  std::vector<DeviceTimes> device_times;  // empty: from the timings
  std::vector<DeviceMemory> memory;
  std::vector<Time> exposed_comm, exposed_offload;
  std::vector<Bytes> offloaded;
  std::vector<OutOfMemory> out_of_memory;
  std::uint64_t events = 0;
  bool completed = true;
  std::string deadlock;  // when not completed: the blocked ops
  /// The event loop's behaviours (engine_component.h): they report after the replay.
  std::vector<std::unique_ptr<EngineComponent>> components;
  struct How {  // how it was replayed, for the next iteration's replay
    bool list_scheduled = false;
    std::uint32_t next_transfer_id = 0;
  };
  How how;
};

}  // namespace

struct Engine::State {
  EngineInput in;
  std::vector<EngineObserver*> observers;
  // Built on the first run and reused by later ones (Monte Carlo samples, docs/variability.md).
  std::optional<OpIndex> op_index;
  std::optional<OpGraph> op_graph;  // built by the first replay that needs the event loop

  explicit State(EngineInput input) : in(std::move(input)) {}
  SimulationResult run();
  /// One iteration: by list scheduling when nothing needs the event loop, else the event loop.
  Outcome replay(const OpIndex& index, std::optional<OpGraph>& graph, std::vector<Time>& given,
                 std::unique_ptr<NetworkModel>& network, const ReplayStart& start);
  SimulationResult result_of(const OpIndex& index, Outcome& outcome, const NetworkModel& network);
};

Outcome Engine::State::replay(const OpIndex& index, std::optional<OpGraph>& graph,
                              std::vector<Time>& given, std::unique_ptr<NetworkModel>& network,
                              const ReplayStart& start) {
  const Table& table = index.table();
  const CostDurations cost_durations(in.compute_slowdown);
  // Without contention, a copy, an observer or a behaviour that refuses it (engine_component.h),
  // one pass of list scheduling gives the event loop's result; a deadlock or an overflow is
  // replayed by the event loop for its report.
  if (in.path == ReplayPath::Auto && observers.empty() && !index.has_copies() &&
      refusing_behaviour(FastPath::ListReplay, in).empty()) {
    const OpDuration duration = [&](std::int32_t d, std::uint32_t n) {
      return given.empty() ? cost_durations.on(index, in.stage_costs, index.op(d, n), d) : given[n];
    };
    if (network->contention_free(table, in.stage_costs, duration)) {
      ListReplay list(table, in, given.empty() ? nullptr : &given, *network, start.device_start);
      Outcome o;
      o.timings = OpTimings(index.ops_per_device());
      if (list.run(o.timings) && !network->contention_seen()) {
        o.memory = list.memory();
        o.exposed_comm = list.exposed_comm();
        o.device_times = list.device_times();
        o.events = list.events();
        o.how.list_scheduled = true;
        o.how.next_transfer_id = start.first_transfer_id;
        return o;
      }
      network = make_network_model(in);
      network->set_jitter(in.durations.get(), start.iteration);
    }
  }
  if (!graph) graph.emplace(index, in.stage_costs);
  if (given.empty()) cost_durations.fill(index, in.stage_costs, 0, given);
  MemoryAccounting memory(*graph, in.release, in.memory_budget, in.host_capacity,
                          network->hosts(table.devices), observers);
  Outcome o;
  o.components = make_components(in, *graph, *network, observers);
  std::vector<EngineComponent*> components;
  for (const auto& c : o.components) components.push_back(c.get());
  EventLoop loop(*graph, given, *network, memory, observers, start, std::move(components));
  loop.run();
  ReplayTimes& times = loop.times();
  o.completed = times.completed == graph->size();
  if (!o.completed) o.deadlock = loop.describe_deadlock();
  o.timings = std::move(times.timings);
  o.memory = memory.devices();
  o.exposed_comm = std::move(times.exposed_comm);
  o.exposed_offload = std::move(times.exposed_offload);
  o.offloaded = memory.offloaded();
  o.out_of_memory = memory.out_of_memory();
  o.events = times.events;
  o.how.next_transfer_id = loop.next_transfer_id();
  return o;
}

SimulationResult Engine::State::run() {
  check_input(in);
  const Table& table = *in.table;
  const IterationPlan& plan = in.iterations;
  if (!op_index) op_index.emplace(table);
  const OpIndex& index = *op_index;
  const auto devices = static_cast<std::size_t>(table.devices);
  std::unique_ptr<NetworkModel> network = make_network_model(in);
  const bool varying = in.durations && in.durations->varies_by_iteration();
  std::optional<OpGraph>& graph = op_graph;
  std::vector<Time> given;  // from EngineInput::durations; empty: from the stage costs
  ReplayStart start;
  SimulationResult result;
  std::vector<Time> completions;
  std::int32_t replays = 0;
  for (std::int32_t iteration = 0; iteration < plan.count; ++iteration) {
    given.clear();
    if (in.durations) in.durations->fill(index, in.stage_costs, iteration, given);
    start.iteration = iteration;
    network->set_jitter(in.durations.get(), iteration);
    Outcome o = replay(index, graph, given, network, start);
    ++replays;
    Metrics scratch;
    if (iteration == 0) {
      result = result_of(index, o, *network);
    } else {
      for (const auto& c : o.components) c->report(scratch, o.completed);
    }
    if (result.status != RunStatus::Ok || !o.completed) break;  // a failed iteration ends it
    const Metrics& m = iteration == 0 ? result.metrics : scratch;
    // Each device is ready for the iteration's end after its last op and its gradient syncs.
    std::vector<Time> ready(devices, Time::zero());
    const OpTimings& timings = iteration == 0 ? result.timings : o.timings;
    for (std::size_t d = 0; d < devices; ++d) {
      for (const OpTiming& t : timings[d]) ready[d] = std::max(ready[d], t.end);
    }
    for (const auto& c : o.components) c->iteration_ready(m, ready);
    const std::vector<Time> step = in.sync ? in.sync->step_after_sync() : plan.optimizer_step;
    const IterationBoundary boundary = end_iteration(plan, ready, step, iteration, observers);
    completions.push_back(boundary.completion);
    start.device_start = boundary.next_start;
    start.first_transfer_id = o.how.next_transfer_id;
    // When every device starts the next iteration at the same instant and nothing in the replay
    // depends on absolute time or on the iteration, the next iteration is this one shifted: its
    // period is this iteration's completion, without replaying it.
    const bool shifted = std::all_of(boundary.next_start.begin(), boundary.next_start.end(),
                                     [&](Time t) { return t == boundary.completion; });
    if (shifted && iteration + 1 < plan.count && !varying && in.link_faults.empty() &&
        refusing_behaviour(FastPath::ShiftedIterations, in).empty() &&
        (network->fixed_delay().has_value() || !network->moves_data())) {
      for (std::int32_t k = iteration + 1; k < plan.count; ++k)
        completions.push_back(completions.back() + boundary.completion);
      break;
    }
  }
  record_iterations(completions, replays, result.metrics);
  return result;
}

SimulationResult Engine::State::result_of(const OpIndex& index, Outcome& o,
                                          const NetworkModel& network) {
  const Table& table = index.table();
  const auto devices = static_cast<std::size_t>(table.devices);
  SimulationResult result;
  result.events = o.events;
  result.list_scheduled = o.how.list_scheduled;
  result.timings = std::move(o.timings);
  result.out_of_memory = std::move(o.out_of_memory);
  if (!o.completed) {
    result.status = RunStatus::Deadlock;
    result.failure = std::move(o.deadlock);
  } else if (!result.out_of_memory.empty()) {
    result.status = RunStatus::OutOfMemory;
    result.failure = out_of_memory_text(result.out_of_memory.front());
  }
  result.metrics =
      compute_metrics(table, in.stage_costs,
                      o.device_times.empty() ? device_times(table, result.timings) : o.device_times,
                      peaks_of(o.memory), o.exposed_comm);
  Metrics& m = result.metrics;
  for (const DeviceMemory& d : o.memory)
    m.memory.peak_memory_time_per_device.push_back(d.total_peak_time);
  m.offload.offloaded_bytes_per_device = o.offloaded;
  if (m.offload.offloaded_bytes_per_device.empty())
    m.offload.offloaded_bytes_per_device.assign(devices, Bytes::zero());
  for (Bytes b : m.offload.offloaded_bytes_per_device) m.offload.offloaded_bytes += b;
  m.offload.exposed_offload_per_device = o.exposed_offload;
  if (m.offload.exposed_offload_per_device.empty())
    m.offload.exposed_offload_per_device.assign(devices, Time::zero());
  for (Time t : m.offload.exposed_offload_per_device) m.offload.exposed_offload += t;
  m.offload.d2h_busy_per_device.assign(devices, Time::zero());
  m.offload.h2d_busy_per_device.assign(devices, Time::zero());
  if (index.has_copies()) {
    for (std::int32_t d = 0; d < table.devices; ++d) {
      const auto row = result.timings[static_cast<std::size_t>(d)];
      for (std::size_t i = 0; i < row.size(); ++i) {
        const Stream stream = stream_of(table.device_ops[static_cast<std::size_t>(d)][i].kind);
        if (row[i].end < Time::zero() || stream == Stream::Compute) continue;
        auto& busy = stream == Stream::DeviceToHost ? m.offload.d2h_busy_per_device
                                                    : m.offload.h2d_busy_per_device;
        busy[static_cast<std::size_t>(d)] += row[i].end - row[i].start;
      }
    }
  }
  m.comm.blocked_send_per_device.assign(devices, Time::zero());
  m.comm.host_gap_per_device.assign(devices, Time::zero());
  bool link_classes = false;
  for (const auto& c : o.components) {
    c->report(m, o.completed);
    link_classes = link_classes || c->reports_link_classes();
  }
  network.report(m, link_classes);
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
