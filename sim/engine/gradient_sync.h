#pragma once
// GradientSync: the end of a training iteration inside the engine (docs/parallelism.md).
//
// The engine simulates one pipeline (data-parallel replica 0). Every table stage's gradients are
// all-reduced, in buckets, between the devices that hold the stage (replica sync: Chimera,
// DualPipe) and then across the D data-parallel replicas of each holder (one collective per
// tensor-parallel rank, all at once). With expert parallelism the routed experts' gradients form a
// second lane of buckets per stage (its own communicator, concurrent with the first) whose
// data-parallel phase runs over the expert data-parallel groups (SyncPlan::ExpertSync). The other
// replicas are assumed to run in lockstep with replica 0 (symmetric), so their GPUs take part in
// the collectives' flows without being simulated. Buckets of one stage run one after another (one
// communicator); different stages run concurrently and share links with each other and with
// pipeline traffic.
//
// Bucket readiness: with overlap, the k buckets of stage s on a holder become ready while the
// holder's last gradient-producing op of s (its last W, or last full backward) runs: bucket i at
// start + (i+1)/k of that op (the last layers' gradients first, as DDP fills its buckets); a
// bucket starts when every holder has it ready. Without overlap every bucket is ready when the
// device's last compute op ends. After the device's syncs (and its last compute op) its
// optimizer step runs; the makespan is the end of the last optimizer step.

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/collectives.h"
#include "sim/engine/observer.h"
#include "sim/engine/simulation_result.h"
#include "sim/engine/sync_metrics.h"
#include "sim/units/bytes.h"
#include "topologies/topology.h"

namespace bubblesim {

/// What the engine needs to synchronise gradients. Filled by the scenario runner.
struct SyncPlan {
  /// gpus[device][dp replica][tp rank] -> GPU vertex; [d][0][0] is the engine's device_vertex.
  std::vector<std::vector<std::vector<VertexId>>> gpus;
  /// Per table stage: gradient bytes held by one GPU (the stage's gradients / tp).
  std::vector<Bytes> gradient_bytes;
  /// When a stage's buckets may start (data_parallel_engine.h, BucketReadiness).
  enum class Ready : std::uint8_t { DuringBackward, AfterBackward, AfterCompute };
  /// The end-of-step gradient collective as the data-parallel engine runs it.
  struct EndOfStep {
    /// false: the data-parallel phase runs no collective (ZeRO 2/3 reduce the gradients inside
    /// every microbatch's ops); a replica phase still runs.
    bool runs = true;
    /// ZeRO >= 1 (sharded optimizer state): the data-parallel phase reduce-scatters the
    /// gradients instead of all-reducing them.
    CollectiveKind kind = CollectiveKind::AllReduce;
    Bytes bucket = Bytes(25 * 1024 * 1024);
    /// Per table stage: its bucket size, overriding `bucket`; zero = the stage's gradients in
    /// one bucket (Megatron buckets its first pipeline rank's first chunk only). Empty = bucket.
    std::vector<Bytes> stage_bucket;
    /// PyTorch DDP: the last bucket reduced holds the parameters defined first and is capped
    /// at this size (1 MiB, dist._DEFAULT_FIRST_BUCKET_BYTES); zero = none.
    Bytes last_bucket;
    /// Per table stage; empty = every stage DuringBackward with overlap.buckets, else
    /// AfterCompute.
    std::vector<Ready> ready;
  };
  EndOfStep end;
  /// `buckets`: buckets start while the gradients' last op runs; `sm_share`
  /// (`overlap.comm_sm_fraction`): while a device's bucket collectives run, they hold this share
  /// of its SMs and its compute runs at 1 - share (GradientSync::compute_rate); 0 = no effect.
  /// The gradient-sync component then runs every compute op: no other component may run one
  /// (the runner leaves it 0 with expert parallelism, whose exchange runs the MoE ops).
  struct {
    bool buckets = true;
    double sm_share = 0;
  } overlap;
  /// The data-parallel collectives' algorithm and how their ring steps run (collective_steps).
  struct {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
    RingSteps ring_steps = RingSteps::Pipelined;
  } collective;
  bool replica_sync = true;
  std::vector<Time> optimizer;  // per device; zero = no optimizer op
  /// ZeRO 1-2 (and FSDP2 under a pipeline): each device all-gathers its updated parameters
  /// (timed on its data-parallel group) after its optimizer step (exposed), before its first
  /// compute op once that op's inputs are in (Megatron's forward pre-hook), or launched at the
  /// step's start so that the pipeline fill hides it (FSDP2 under a pipeline; Megatron's aligned
  /// gather).
  struct ParameterGather {
    enum class When : std::uint8_t { AfterStep, BeforeFirstForward, AtStepStart };
    std::vector<Time> per_device;  // empty = none
    When when = When::AfterStep;
  };
  ParameterGather parameter_gather;
  /// What each device runs after its syncs: its optimizer step and, AfterStep, its gather.
  std::vector<Time> step_after_sync() const;
  /// Per table stage: TP all-reduce time already inside each F and each B op's duration (for
  /// traces and tp_comm); empty = no TP.
  std::vector<Time> tp_forward, tp_backward;
  std::vector<CollectiveSummary> tp_summaries;  // reported as given
  /// Per table stage: what ZeRO 2/3's collectives leave exposed inside each op (already in its
  /// duration): the all-gathers of an F and of a B, the reduce-scatters of a B's weight
  /// gradients (W's when split); for the trace's slices. Empty = none.
  struct InOps {
    std::vector<Time> gather_forward, gather_backward, reduce_scatter;
  };
  InOps dp_in_ops;
  /// Expert parallelism (docs/moe.md): the routed experts' gradients, part of gradient_bytes,
  /// are synchronised over the GPUs holding the same experts, not over the whole dp group.
  struct ExpertSync {
    /// Per table stage: the routed experts' share of gradient_bytes; empty = none.
    std::vector<Bytes> gradient_bytes;
    /// groups[device]: the expert data-parallel groups of the device's stage, every GPU of the
    /// stage in exactly one (a group of one GPU syncs nothing); [d][0] holds gpus[d][0][0].
    std::vector<std::vector<std::vector<VertexId>>> groups;
  };
  ExpertSync experts;
  /// Per table stage, when the ops carry an expert all-to-all or routed experts (docs/moe.md):
  /// their costs, for the trace's slices of each op's all-to-all and expert phase; empty = none.
  std::vector<StageCost> a2a_costs;
  /// The all-to-all runs as flows (expert_exchange.h), which draws its own slices: the trace's
  /// slices of each op's all-to-all from a2a_costs are left out.
  bool a2a_as_flows = false;
};

class GradientSync {
 public:
  /// Tokens with this bit are readiness timers, the others collective arrivals.
  static constexpr std::uint32_t kReadyBit = 0x80000000u;

  GradientSync(const SyncPlan& plan, const Table& table, const Topology& topology, FlowPort& port,
               const std::vector<EngineObserver*>& observers);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  /// A compute op (stream 0) starts at `start` and will end at `end`.
  void on_compute_start(std::int32_t device, std::int32_t position, Time start, Time end);
  /// A compute op ended at `end` (later than on_compute_start said when its all-to-all ran as
  /// flows, expert_exchange.h).
  void on_compute_end(std::int32_t device, std::int32_t position, Time end);
  /// A token handed to the port came back.
  void on_token(std::uint32_t token, Time now);
  /// The speed of `device`'s compute now, as a share of its own: 1 - SyncPlan::overlap.sm_share
  /// while any of its bucket collectives runs, else 1.
  double compute_rate(std::int32_t device) const;
  /// The devices whose compute_rate changed since the last call (each once, in order).
  std::vector<std::int32_t> take_rate_changes();
  /// When the device's first compute op may start, asked with its inputs in at `now` on a stream
  /// free since `stream_free` (the parameter all-gather before it; SyncPlan::parameter_gather).
  Time first_op_ready(std::int32_t device, Time now, Time stream_free);
  /// The table position of the device's first compute op (-1: none).
  std::int32_t first_compute(std::int32_t device) const;
  /// After the event loop: optimizer steps, metrics.sync, makespan. `completed`: the table ran
  /// to the end (no deadlock).
  void finish(Metrics& metrics, bool completed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubblesim
