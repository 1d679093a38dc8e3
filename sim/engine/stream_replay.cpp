#include "sim/engine/stream_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "schedules/list_scheduling.h"
#include "schedules/replay_rules.h"
#include "sim/engine/component_kind.h"
#include "sim/engine/device_memory.h"
#include "sim/engine/duration_model.h"
#include "sim/engine/end_window.h"
#include "sim/engine/iteration_end.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {
namespace {

using namespace list_scheduling;

constexpr std::size_t kChunk = 256;  // ops a device reads from its stream at a time

// One device: its read buffer (the kernel's lane source) and what the metrics need.
struct StreamLane {
  std::array<Op, kChunk> buffer;
  std::size_t at = 0, held = 0;  // next op in the buffer, ops in it
  std::uint64_t done = 0, count = 0;
  LaneClock clock;
  const OrderStream* order = nullptr;
  std::int32_t device = 0;

  // The kernel's lane source: the rest of the chunk read last, the next chunk once it ran.
  std::span<const Op> ahead() {
    if (done == count) return {};
    if (at == held) {
      held = order->read(device, done, buffer);
      at = 0;
      if (held == 0) throw std::logic_error("an order stream ended before its count");
      for (std::size_t k = 0; k < held; ++k) {
        if (buffer[k].kind != OpKind::Forward && buffer[k].kind != OpKind::Backward) {
          throw std::logic_error(fmt::format(
              "an order stream holds {}: streams hold forwards and unsplit backwards only",
              to_string(buffer[k])));
        }
      }
    }
    return {buffer.data() + at, held - at};
  }
  void ran(std::size_t /*i*/, const Slot& /*slot*/) {}
  void advance(std::size_t n) {
    at += n;
    done += n;
  }
};

// The end times still needed, per (kind, stage): forwards and unsplit backwards only (the
// stream's premise). Each entry is kept until every op that reads it ran.
struct WindowedEnds {
  std::vector<EndWindow> f, b;
  std::vector<std::int32_t> readers_f, readers_b;  // per stage: the ops that read its F, its B
  std::int32_t stages = 0;

  explicit WindowedEnds(std::int32_t n) : f(static_cast<std::size_t>(n)), b(f), stages(n) {
    for (std::int32_t s = 0; s < n; ++s) {
      readers_f.push_back(readers(OpKind::Forward, s));
      readers_b.push_back(readers(OpKind::Backward, s));
    }
  }
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    if (k == OpKind::Forward) return f[static_cast<std::size_t>(s)].end(j);
    if (k == OpKind::Backward) return b[static_cast<std::size_t>(s)].end(j);
    return kAbsent;
  }
  void set(OpKind k, std::int32_t s, std::int32_t j, std::int64_t e) {
    const auto ss = static_cast<std::size_t>(s);
    if (k == OpKind::Forward)
      f[ss].put(j, e, readers_f[ss]);
    else
      b[ss].put(j, e, readers_b[ss]);
    // Its own inputs have one reader less; those no one needs any more are dropped.
    for_each_producer(k, s, j, stages,
                      [&](OpKind pk, std::int32_t ps, std::int32_t pj, DependencyKind) {
                        if (pk == OpKind::Forward) f[static_cast<std::size_t>(ps)].consumed(pj);
                        if (pk == OpKind::Backward) b[static_cast<std::size_t>(ps)].consumed(pj);
                      });
  }

 private:
  // The ops of a stream that read (kind, s): its consumers among forwards and backwards.
  std::int32_t readers(OpKind kind, std::int32_t s) const {
    std::int32_t n = 0;
    for_each_consumer(kind, s, 0, stages,
                      [&](OpKind k, std::int32_t, std::int32_t, DependencyKind) {
                        n += k == OpKind::Forward || k == OpKind::Backward ? 1 : 0;
                      });
    return n;
  }
};

// Durations from the stage costs (with a straggler's slowdown), a constant delay per stage
// boundary, memory from the release rules.
struct StreamPolicy {
  static constexpr std::uint32_t kKinds = kind_bit(OpKind::Forward) | kind_bit(OpKind::Backward);
  const std::vector<StageCost>& costs;
  const std::vector<std::int64_t>& boundary_delay;
  ReleaseConvention release;
  double factor;
  DeviceMemory& mem;

  std::int64_t arrival(DependencyKind d, std::int32_t s, std::int32_t /*j*/, std::int64_t e) const {
    return replay_rules::arrival(e, boundary_delay[static_cast<std::size_t>(transfer_stage(d, s))]);
  }
  std::int64_t length(const Op& op) const {
    const StageCost& c = costs[static_cast<std::size_t>(op.stage)];
    const Time length = op.kind == OpKind::Forward
                            ? c.forward
                            : Time::from_ps(replay_rules::backward_duration(
                                  c.backward_input.ps(), c.backward_weight.ps(), /*split=*/false));
    return (factor != 1.0 ? scaled(length, factor) : length).ps();
  }
  bool start(const Op& op, const Slot& slot) {
    const StageCost& c = costs[static_cast<std::size_t>(op.stage)];
    if (op.kind == OpKind::Forward) mem.allocate(c.activation, true, Time::from_ps(slot.start));
    if (op.kind != OpKind::Backward) return true;
    const Bytes growth = backward_growth(c, false);  // a unit recomputed inside B
    if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(slot.start));
    mem.release(std::min(backward_release(c, false, false, release)->bytes,
                         held_during_backward(c, false, false)),
                true);
    return true;
  }
  void ended(const Op& /*op*/, const Slot& /*slot*/) const {}
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
  const std::vector<double>& slowdown = in.compute_slowdown;
  // Per stage boundary s | s + 1: the delay of the activation and the gradient that cross it.
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(stages), 0);
  for (std::size_t s = 0; s + 1 < boundary.size(); ++s)
    if (moves_data && device_of[s + 1] != device_of[s]) boundary[s] = delay.ps();
  WindowedEnds ends(stages);

  StreamOutcome o;
  o.memory = devices_of(table, in.stage_costs);
  std::vector<StreamLane> lanes(n);
  for (std::size_t d = 0; d < n; ++d) {
    lanes[d].order = &order;
    lanes[d].device = static_cast<std::int32_t>(d);
    lanes[d].count = order.count(static_cast<std::int32_t>(d));
    if (d < device_start.size()) lanes[d].clock.free = device_start[d].ps();
  }
  o.completed = sweep(n, [&](std::size_t d) -> std::uint64_t {
    StreamLane& lane = lanes[d];
    StreamPolicy policy{in.stage_costs, boundary, in.release,
                        d < slowdown.size() ? slowdown[d] : 1.0, o.memory[d]};
    const std::uint64_t before = lane.done;
    run_lane(lane, ends, policy, stages);
    return lane.done - before;
  });
  o.times.resize(n);
  o.exposed_comm.resize(n);
  std::uint64_t arrivals = 0;
  for (std::size_t d = 0; d < n; ++d) {
    const StreamLane& lane = lanes[d];
    DeviceTimes& t = o.times[d];
    t.busy = Time::from_ps(lane.clock.busy);
    if (lane.clock.first_start >= 0) t.first = Time::from_ps(lane.clock.first_start);
    if (lane.done > 0) t.last = t.end = Time::from_ps(lane.clock.free);
    o.exposed_comm[d] = Time::from_ps(lane.clock.exposed);
    arrivals += lane.clock.arrivals;
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
  result.components = component_use(in);
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
