#pragma once
// GradientSync's state (gradient_sync.h), shared by its two source files: gradient_sync.cpp (the
// buckets' collectives as the replay runs) and gradient_sync_report.cpp (readiness of buckets
// from compute ops, TP slices and the metrics after the replay). Private to sim/engine.

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "schedules/table_index.h"
#include "sim/engine/gradient_sync.h"

namespace bubblesim {

struct GradientSync::Impl {
  enum class Phase { Replica, DataParallel, Done };

  /// The buckets of a stage's dense parameters and of its routed experts (SyncPlan::ExpertSync).
  enum Lane : std::size_t { kDense = 0, kExperts = 1, kLanes = 2 };

  struct Unit {
    std::int32_t stage = 0;
    std::int32_t bucket = 0;
    Lane lane = kDense;
    Bytes bytes;
    std::int32_t ready_count = 0;
    bool ready = false;
    Phase phase = Phase::Replica;
    std::int32_t pending = 0;
    Time phase_start;
    std::vector<std::uint32_t> instances;
  };

  /// One communicator's buckets of a stage: they run one after another.
  struct LaneState {
    std::vector<std::size_t> units;  // indices into units, bucket order
    Bytes bytes;                     // per GPU, summed over the buckets
    std::size_t cursor = 0;
    bool busy = false;
    Time replica_time, dp_time;
    Time replica_closed, dp_closed;
  };

  struct StageState {
    std::vector<std::int32_t> holders;  // devices holding the stage, ascending
    std::array<LaneState, kLanes> lanes;
    Time end;
  };

  const SyncPlan& plan;
  const Table& table;
  const TableIndex index;  // the table's ops by (kind, stage, microbatch)
  const Topology& topology;
  FlowPort& port;
  const std::vector<EngineObserver*>& observers;
  /// Collectives launched so far, by id (the token the port reports them with).
  struct Instances {
    std::vector<std::unique_ptr<CollectiveInstance>> list;
    std::vector<std::size_t> unit;
    std::vector<std::int32_t> device;  // holder device the instance belongs to
    std::vector<bool> reported;        // the holder's tp-rank-0 instance: reported to observers
  };
  /// What is computed once per replay and reused: routes between ranks, and the closed-form
  /// time (with its node count) and alpha-beta fit of a collective, by (stage, phase).
  struct Caches {
    std::map<std::pair<VertexId, VertexId>, Route> routes;
    std::map<std::pair<std::int32_t, int>, std::pair<Time, std::int32_t>> closed;
    std::map<std::pair<std::int32_t, int>, AlphaBeta> alpha_beta;
  };

  std::vector<StageState> stages;
  std::vector<Unit> units;
  Instances instances;
  Caches cache;
  std::vector<std::pair<std::size_t, bool>> ready_events;  // (unit, unused)
  /// Per device: the position of its last compute op and that op's end, the TP time inside its
  /// ops, and its bucket collectives running now.
  struct PerDevice {
    std::vector<std::int32_t> first_compute, last_compute;
    /// When the first compute op's parameter all-gather ends (set when it is first asked), and
    /// how long that op waited for it.
    std::vector<std::optional<Time>> gather_due;
    std::vector<Time> gather_wait;
    std::vector<Time> compute_end;
    std::vector<Time> tp;
    std::vector<std::int32_t> in_flight;
  };
  PerDevice per_device;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::int32_t>>
      last_grad;  // (device, pos) -> stages
  /// The devices whose count of running bucket collectives left or reached 0 since
  /// GradientSync::take_rate_changes.
  std::vector<std::int32_t> rate_changes;
  void count_in_flight(std::int32_t device, std::int32_t delta);

  Impl(const SyncPlan& p, const Table& t, const Topology& topo, FlowPort& fp,
       const std::vector<EngineObserver*>& obs);
  bool has_replica_phase(const StageState& st) const;
  std::int32_t dp() const;
  std::int32_t tp() const;
  std::uint32_t launch(std::size_t u, std::int32_t device, bool report, std::vector<VertexId> ranks,
                       CollectiveAlgorithm algorithm);
  Time closed_form(const Unit& unit, Phase phase, const std::vector<VertexId>& ranks,
                   CollectiveAlgorithm algorithm);
  void start_phase(std::size_t u, Time now);
  void end_phase(std::size_t u, Time now);
  void instance_done(std::uint32_t id, Time now);
  void advance(std::int32_t s, Time now);
  void add_buckets(std::size_t s, Lane lane, Bytes total);
  SyncPlan::Ready readiness(std::size_t s) const;
  /// The ranks of each data-parallel collective of `unit` launched from holder `h`.
  std::vector<std::vector<VertexId>> dp_groups(const Unit& unit, std::int32_t h) const;
  std::int32_t dp_group_size(Lane lane, std::int32_t h) const;
  void unit_finished(std::size_t u, Time now);
  void on_token(std::uint32_t token, Time now);
  void ready_at(std::size_t u, Time at);
  void on_compute_start(std::int32_t device, std::int32_t position, Time start, Time end);
  void report_tp(std::int32_t device, std::int32_t position, Time start, Time end);
  /// ZeRO 2/3's exposed all-gathers (at the op's start) and reduce-scatters (at its end, before
  /// the TP slice) as slices on the device's sync lane (SyncPlan::dp_in_ops).
  void report_sharded(std::int32_t device, const Op& op, Time start, Time end);
  /// The routed experts' phase of a MoE op as a slice on the device's phase lane (docs/moe.md).
  void report_experts(std::int32_t device, const Op& op, Time start, Time end);
  /// The all-to-all time `op` leaves exposed (plan.a2a_costs; zero without).
  A2aOverlap a2a_of(const Op& op) const;  // the op's all-to-all: hidden, exposed, slowdown
  void finish(Metrics& m, bool completed);
};

}  // namespace bubblesim
