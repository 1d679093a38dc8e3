#pragma once
// EngineInput: everything one replay needs. The engine never knows which generator made the table.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/parameter.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/iteration_plan.h"
#include "sim/engine/symmetry/symmetry_mode.h"
#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/topology.h"

namespace bubblesim {

/// A link fault (docs/reliability.md): from time `at`, the directed link carries at most
/// `bytes_per_second` (0 = cut: flows over it stall; a transfer stalled until the end is reported
/// as a deadlock naming it). Routes are not recomputed.
struct LinkFault {
  LinkId link = 0;
  Time at;
  double bytes_per_second = 0.0;
};
struct SyncPlan;       // sim/engine/gradient_sync.h
struct A2aPlan;        // sim/engine/expert_exchange.h
class DurationModel;   // sim/engine/duration_model.h
struct ComponentKind;  // sim/engine/component_kind.h
class ReplayScratch;   // internal to the engine (list_replay.h); make_replay_scratch() makes one

/// The network a replay runs over: one alternative per network model (sim/engine/network/).
/// No communication cost at all: a dependency arrives when its producer ends (the idealized
/// table). No transfers are reported.
struct NoCostNetwork {};
/// A constant delay on every cross-device F->F and B->B edge, no bandwidth limit.
struct FixedDelayNetwork {
  Time delay;
};
/// Flows over routes with max-min fair sharing of every link, plus route latency.
struct TopologyNetwork {
  const Topology* topology = nullptr;
  std::vector<VertexId> device_vertex;  // device -> GPU vertex
  /// The expert all-to-all of MoE ops as flows (docs/moe.md). Null = inside the ops' durations
  /// as the stage costs say (timed on an idle network).
  std::shared_ptr<const A2aPlan> a2a{};
};
using NetworkSpec = std::variant<NoCostNetwork, FixedDelayNetwork, TopologyNetwork>;

/// Which replay runs. Auto: list scheduling where no two transfers can compete and nothing
/// watches (the same result, faster; docs/engine.md), else the event loop. EventLoop: always the
/// event loop (the equivalence tests and benchmarks compare both).
enum class ReplayPath { Auto, EventLoop };

/// The engine's behaviours a replay may engage (sim/engine/component_kind.h) and the values of
/// the scenario keys they declare.
struct Behaviours {
  /// By full key ("communication.p2p"); a key left out reads as its declared default
  /// (setting_value).
  ParamValues settings;
  /// The behaviours; empty: the built-in ones (builtin_components()).
  std::span<const ComponentKind> kinds;
};

struct EngineInput {
  const Table* table = nullptr;
  std::vector<StageCost> stage_costs;  // per table stage (CostProfile::for_table)
  NetworkSpec network;
  ReleaseConvention release = ReleaseConvention::Split;
  std::vector<Bytes> memory_budget;  // per device; empty = unlimited
  /// Offload (O) and reload (L) copies. Topology: a flow over the route between the GPU and its
  /// nearest host vertex. Otherwise, when set, a private link of this bandwidth per GPU (copy
  /// time = bytes / bandwidth, no contention between GPUs) to one shared host memory "host";
  /// when unset, copies take no time (the idealized replay).
  std::optional<Bandwidth> offload_bandwidth;
  /// Host memory per host vertex (or the one "host"); offloaded bytes above it are an
  /// out_of_memory outcome naming the host. Unset = unlimited.
  std::optional<Bytes> host_capacity;
  /// Stragglers: per device, a factor (>= 1 typically) multiplying every compute op's duration
  /// (F, B, W, R, fused); empty = none. Copies and transfers are not slowed.
  std::vector<double> compute_slowdown;
  /// Each op's duration; null = from the stage costs and compute_slowdown (CostDurations).
  std::shared_ptr<const DurationModel> durations;
  /// Link faults, TopologyNetwork only; applied in time order as engine events.
  std::vector<LinkFault> link_faults;
  /// Gradient sync, optimizer and TP (docs/parallelism.md); TopologyNetwork only. Null = none.
  std::shared_ptr<const SyncPlan> sync;
  /// The behaviours this replay may engage and their settings (component_kind.h).
  Behaviours behaviours;
  /// Whole iterations: how many, and what ends each (iteration_plan.h). Default: one replay.
  IterationPlan iterations;
  ReplayPath path = ReplayPath::Auto;
  /// Whether a topology's flows may be solved by class (docs/engine.md, "Symmetric flows").
  SymmetryMode symmetry = SymmetryMode::Auto;
  /// Called now and then during an event-loop replay with the simulated time and the events so
  /// far (a progress line on a terminal); null: never.
  std::function<void(Time simulated, std::uint64_t events)> progress;
  /// Arrays to reuse across replays (optional; one replay at a time per scratch).
  std::shared_ptr<ReplayScratch> scratch;

  const TopologyNetwork* topology_network() const { return std::get_if<TopologyNetwork>(&network); }
};

/// Fresh arrays for EngineInput::scratch: give one to each thread of replays that run one after
/// the other (a run's idealized and simulated replays, a Monte Carlo worker's samples).
std::shared_ptr<ReplayScratch> make_replay_scratch();

}  // namespace bubblesim
