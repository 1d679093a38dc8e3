#include "sim/engine/stream_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "schedules/replay_rules.h"
#include "sim/engine/device_memory.h"
#include "sim/engine/duration_model.h"
#include "sim/engine/end_window.h"
#include "sim/engine/engine_component.h"
#include "sim/engine/iteration_end.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

constexpr std::size_t kChunk = 256;  // ops a device reads from its stream at a time

// One device: its read buffer and what the metrics need.
struct StreamLane {
  std::array<Op, kChunk> buffer;
  std::size_t at = 0, held = 0;  // next op in the buffer, ops in it
  std::uint64_t done = 0, count = 0;
  std::int64_t free = 0, busy = 0, exposed = 0, first_start = -1;
};

// What one iteration's replay produced.
struct StreamOutcome {
  std::vector<DeviceMemory> memory;
  std::vector<DeviceTimes> times;
  std::vector<Time> exposed_comm;
  std::uint64_t events = 0, completed = 0;
};

StreamOutcome replay_once(const EngineInput& in, const OrderStream& order, bool moves_data,
                          Time delay, const std::vector<Time>& device_start) {
  const Table& table = order.shape();
  const std::int32_t stages = table.stages;
  const auto n = static_cast<std::size_t>(table.devices);
  const std::vector<std::int32_t>& device_of = table.placement.device_of_stage.front();
  const std::vector<StageCost>& costs = in.stage_costs;
  const std::vector<double>& slowdown = in.compute_slowdown;
  // Per stage: the delay of an activation into F(s) and of a gradient into B(s), and how many ops
  // read F(s, j) (F(s+1, j) and B(s, j)) and B(s, j) (B(s-1, j)).
  std::vector<std::int64_t> from_prev(static_cast<std::size_t>(stages), 0), from_next(from_prev);
  for (std::int32_t s = 0; s < stages; ++s) {
    const auto ss = static_cast<std::size_t>(s);
    if (moves_data && s > 0 && device_of[ss - 1] != device_of[ss]) from_prev[ss] = delay.ps();
    if (moves_data && s + 1 < stages && device_of[ss + 1] != device_of[ss])
      from_next[ss] = delay.ps();
  }
  std::vector<EndWindow> end_f(static_cast<std::size_t>(stages)), end_b(end_f);

  StreamOutcome o;
  o.memory = devices_of(table, costs);
  std::vector<StreamLane> lanes(n);
  for (std::size_t d = 0; d < n; ++d) {
    lanes[d].count = order.count(static_cast<std::int32_t>(d));
    if (d < device_start.size()) lanes[d].free = device_start[d].ps();
  }
  std::uint64_t arrivals = 0;
  // Sweeps over the devices alternating direction (activations flow up, gradients down), each
  // device running as far as its inputs allow, until a sweep makes no progress.
  for (bool up = true;; up = !up) {
    std::uint64_t progress = 0;
    for (std::size_t visit = 0; visit < n; ++visit) {
      const std::size_t d = up ? visit : n - 1 - visit;
      StreamLane& lane = lanes[d];
      DeviceMemory& mem = o.memory[d];
      const double factor = d < slowdown.size() ? slowdown[d] : 1.0;
      const std::uint64_t before = lane.done;
      while (lane.done < lane.count) {
        if (lane.at == lane.held) {
          lane.held = order.read(static_cast<std::int32_t>(d), lane.done, lane.buffer);
          lane.at = 0;
          if (lane.held == 0) throw std::logic_error("an order stream ended before its count");
        }
        const Op& op = lane.buffer[lane.at];
        const std::int32_t s = op.stage;
        const auto ss = static_cast<std::size_t>(s);
        const std::int64_t j = op.microbatch;
        const StageCost& c = costs[ss];
        std::int64_t ready = 0, local = 0;
        Time length;
        if (op.kind == OpKind::Forward) {
          if (s > 0) {
            const std::int64_t e = end_f[ss - 1].end(j);
            if (e == EndWindow::kPending) break;
            local = e;
            ready = replay_rules::arrival(e, from_prev[ss]);
            arrivals += from_prev[ss] > 0 ? 1 : 0;
          }
          length = c.forward;
        } else if (op.kind == OpKind::Backward) {
          local = ready = end_f[ss].end(j);
          if (local == EndWindow::kPending) break;
          if (s + 1 < stages) {
            const std::int64_t e = end_b[ss + 1].end(j);
            if (e == EndWindow::kPending) break;
            local = std::max(local, e);
            ready = std::max(ready, replay_rules::arrival(e, from_next[ss]));
            arrivals += from_next[ss] > 0 ? 1 : 0;
          }
          length = Time::from_ps(replay_rules::backward_duration(
              c.backward_input.ps(), c.backward_weight.ps(), /*split=*/false));
        } else {
          throw std::logic_error(fmt::format(
              "an order stream holds {}: streams hold forwards and unsplit backwards only",
              to_string(op)));
        }
        if (factor != 1.0) length = scaled(length, factor);
        const std::int64_t start = replay_rules::op_start(lane.free, ready);
        lane.exposed += replay_rules::exposed_wait(start, local, lane.free);
        const std::int64_t end = (Time::from_ps(start) + length).ps();
        if (lane.first_start < 0) lane.first_start = start;
        lane.busy += end - start;
        lane.free = end;
        if (op.kind == OpKind::Forward) {
          mem.allocate(c.activation, true, Time::from_ps(start));
          end_f[ss].put(j, end, s + 1 < stages ? 2 : 1);
          if (s > 0) end_f[ss - 1].consumed(j);
        } else {
          const Bytes growth = backward_growth(c, false);  // a unit recomputed inside B
          if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(start));
          mem.release(std::min(backward_release(c, false, false, in.release)->bytes,
                               held_during_backward(c, false, false)),
                      true);
          end_b[ss].put(j, end, s > 0 ? 1 : 0);
          end_f[ss].consumed(j);
          if (s + 1 < stages) end_b[ss + 1].consumed(j);
        }
        ++lane.at;
        ++lane.done;
      }
      progress += lane.done - before;
    }
    o.completed += progress;
    if (progress == 0) break;  // done, or blocked for good
  }
  o.times.resize(n);
  o.exposed_comm.resize(n);
  for (std::size_t d = 0; d < n; ++d) {
    const StreamLane& lane = lanes[d];
    DeviceTimes& t = o.times[d];
    t.busy = Time::from_ps(lane.busy);
    if (lane.first_start >= 0) t.first = Time::from_ps(lane.first_start);
    if (lane.done > 0) t.last = t.end = Time::from_ps(lane.free);
    o.exposed_comm[d] = Time::from_ps(lane.exposed);
  }
  o.events = o.completed + arrivals;
  return o;
}

}  // namespace

std::string why_not_streamable(const EngineInput& in) {
  if (std::holds_alternative<TopologyNetwork>(in.network))
    return "a topology (flows may contend: the event loop decides)";
  if (in.path != ReplayPath::Auto) return "the event-loop replay path";
  if (std::string_view b = refusing_behaviour(FastPath::StreamReplay, in); !b.empty())
    return std::string(b);
  if (!in.memory_budget.empty())
    return "a memory budget (the out-of-memory report needs the table)";
  if (in.durations) return "sampled op durations (variability)";
  if (!in.link_faults.empty()) return "link faults";
  return "";
}

SimulationResult simulate_streamed(const EngineInput& in, const OrderStream& order) {
  const std::string refusal = why_not_streamable(in);
  if (!refusal.empty()) throw std::invalid_argument("a streamed replay cannot have " + refusal);
  const Table& table = order.shape();
  if (static_cast<std::int64_t>(in.stage_costs.size()) != table.stages ||
      table.placement.replicas() != 1) {
    throw std::invalid_argument("a streamed replay needs one replica and costs for every stage");
  }
  EngineInput shaped = in;
  shaped.table = &table;
  std::unique_ptr<NetworkModel> network = make_network_model(shaped);
  const std::optional<Time> fixed = network->fixed_delay();
  const auto n = static_cast<std::size_t>(table.devices);
  const IterationPlan& plan = in.iterations;
  SimulationResult result;
  result.list_scheduled = true;
  std::vector<Time> device_start, completions;
  std::int32_t replays = 0;
  for (std::int32_t iteration = 0; iteration < plan.count; ++iteration) {
    StreamOutcome o =
        replay_once(in, order, network->moves_data(), fixed.value_or(Time::zero()), device_start);
    ++replays;
    if (iteration == 0) {
      result.events = o.events;
      Metrics& m = result.metrics;
      m = compute_metrics(table, in.stage_costs, o.times, peaks_of(o.memory), o.exposed_comm);
      for (const DeviceMemory& d : o.memory)
        m.memory.peak_memory_time_per_device.push_back(d.total_peak_time);
      m.offload.offloaded_bytes_per_device.assign(n, Bytes::zero());
      m.offload.exposed_offload_per_device.assign(n, Time::zero());
      m.offload.d2h_busy_per_device.assign(n, Time::zero());
      m.offload.h2d_busy_per_device.assign(n, Time::zero());
      m.comm.blocked_send_per_device.assign(n, Time::zero());
      network->report(m, false);
    }
    if (o.completed != order.op_count()) {
      result.status = RunStatus::Deadlock;
      result.failure = fmt::format(
          "the streamed replay stalled after {} of {} ops (replay the table in memory, --stream "
          "off, for the blocked ops)",
          o.completed, order.op_count());
      break;
    }
    std::vector<Time> ready(n);
    for (std::size_t d = 0; d < n; ++d) ready[d] = o.times[d].end;
    const IterationBoundary boundary =
        end_iteration(plan, ready, plan.optimizer_step, iteration, {});
    completions.push_back(boundary.completion);
    device_start = boundary.next_start;
    // As Engine::run: a next iteration that starts everywhere at once is this one shifted
    // (every behaviour a stream replays permits it).
    const bool shifted = std::all_of(device_start.begin(), device_start.end(),
                                     [&](Time t) { return t == boundary.completion; });
    if (shifted && iteration + 1 < plan.count &&
        refusing_behaviour(FastPath::ShiftedIterations, in).empty()) {
      for (std::int32_t k = iteration + 1; k < plan.count; ++k)
        completions.push_back(completions.back() + boundary.completion);
      break;
    }
  }
  record_iterations(completions, replays, result.metrics);
  return result;
}

}  // namespace bubblesim
