#pragma once
// Scenario: a validated description of one simulation problem, as read from a scenario YAML file
// (scenario_loader.h), one member per section. Plain data: defaults are filled in and costs are
// per stage, but nothing is derived from a topology or a collective here; the runner's resolve
// step (sim/runner/resolve.h) turns a Scenario into generator and engine inputs.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/parameter.h"
#include "schedules/replay_settings.h"
#include "schedules/stage_costs.h"
#include "schedules/variability_settings.h"
#include "sim/costmodel/data_parallel_engine.h"
#include "sim/costmodel/model_costs.h"
#include "sim/costmodel/model_spec.h"
#include "sim/units/bytes.h"
#include "sim/units/diagnostics.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/collective_algorithm.h"
#include "topologies/topology.h"

namespace bubblesim {

enum class CommunicationKind { FixedDelay, Topology };
/// `communication.all_to_all` (docs/moe.md): the expert all-to-all as flows of the replay that
/// share links with all other traffic, or timed once per stage on an idle network and folded
/// into the ops' durations.
enum class AllToAllNetwork { Shared, Idle };

/// `communication:`, `topology:` and `placement:`.
struct CommunicationSpec {
  CommunicationKind kind = CommunicationKind::FixedDelay;
  Time delay;                                // FixedDelay: added on every cross-stage edge
  std::shared_ptr<const Topology> topology;  // Topology: the cluster graph
  std::vector<VertexId> placement;           // device (pipeline rank) -> GPU vertex
  P2pMode p2p = P2pMode::Async;              // communication.p2p (docs/iterations.md)
  Time p2p_sync_gap;  // communication.p2p_sync_gap: host gap after each blocking p2p call
  AllToAllNetwork all_to_all = AllToAllNetwork::Shared;  // communication.all_to_all
};

/// `iteration:` — how many training iterations a replay covers and what separates them
/// (docs/iterations.md). The default replays two, so the iteration time is a steady state.
struct IterationSpec {
  std::int32_t count = 2;
  IterationBarrier barrier = IterationBarrier::Global;
};

/// `memory:` — budgets, host memory, the release convention and the memory passes
/// (docs/memory.md).
struct MemorySpec {
  /// As given: empty = no budget; one value = every device; else one per device. Read it through
  /// memory_budget_of_device(), the one place that rule lives.
  std::vector<Bytes> budget;
  /// The key that set the budget and where (for the static-memory check once a table is known):
  /// `memory.budget`, or `cluster.gpu.memory` (or `cluster.gpu.preset`) when it is the GPU's.
  std::string budget_key = "memory.budget";
  SourceLocation budget_where;
  std::optional<Bytes> host_capacity;  // per host vertex (or the one host of fixed-delay)
  ReleaseConvention release = ReleaseConvention::Split;
  OffloadSettings offload;  // d2h / h2d are left empty: the resolve step derives them
  std::optional<Bandwidth> offload_bandwidth;  // fixed-delay only: a private PCIe link per GPU
  RecomputeSettings recompute;
  SourceLocation offload_where, recompute_where;  // for errors found when a table is known
};

/// The budget of device `d` (0 <= d < devices): the one value for every device, or its entry of
/// the list. nullopt when the scenario sets no budget.
std::optional<Bytes> memory_budget_of_device(const MemorySpec& memory, std::int32_t d);

/// `faults:` — simulated faults (docs/reliability.md). They apply to the simulation level only:
/// the idealized table and the formula stay fault-free, and every faulty run is also replayed
/// without its faults so the report can show their effect.
struct LinkFaultSpec {
  std::string a, b;           // the vertices the physical link joins (both directions fail)
  std::vector<LinkId> links;  // the directed links between them
  Time at;                    // when the fault starts
  std::optional<Bandwidth> bandwidth;  // degraded to this; unset = cut
};

struct FaultSpec {
  std::vector<double> slowdown;  // per device (pipeline rank); empty = no straggler
  std::vector<LinkFaultSpec> links;
  bool any() const { return !slowdown.empty() || !links.empty(); }
};

/// `data_parallel:` — how the gradients of the dp replicas are synchronized (docs/parallelism.md).
struct DataParallelSpec {
  /// `data_parallel.bucket`: gradient bytes per bucket; unset = the engine's default
  /// (default_bucket_bytes: DDP's 25 MiB, Megatron's max(40M, 1M x dp) parameters, DeepSpeed's
  /// 5e8 elements).
  std::optional<Bytes> bucket;
  /// Buckets may start while the last backward runs (resolved: the engine's default unless
  /// `data_parallel.overlap` says).
  bool overlap = true;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  bool replica_sync = true;  // bidirectional schedules: all-reduce the replicas' gradients
  /// `data_parallel.ring_steps`: how every ring collective's steps are simulated.
  RingSteps ring_steps = RingSteps::Pipelined;
  /// `data_parallel.replicate`: HSDP, parameters sharded over dp x cp / replicate GPUs and
  /// replicated over `replicate` groups of them (1: every dp x cp GPU shares one shard group).
  std::int32_t replicate = 1;
  /// What the engine runs (data_parallel_engine.h), resolved from `data_parallel.engine` (else
  /// the framework preset's, else `parallelism.zero`'s), the ZeRO level and the keys above.
  DataParallelSemantics semantics;
  /// Where the engine came from: "data_parallel.engine", "model.framework NAME" or
  /// "parallelism.zero".
  std::string engine_from = "parallelism.zero";
};

/// `parallelism:` and `data_parallel:` (docs/parallelism.md), plus the explicit per-stage sync
/// costs of `costs:`. What they imply (the TP split, all-reduce times, gradient bytes, optimizer
/// time) is derived by the resolve step.
struct ParallelismSpec {
  bool enabled = false;  // `parallelism:` or `data_parallel:` given
  std::int32_t dp = 1;
  std::int32_t tp = 1;
  /// `parallelism.cp`: context parallelism, each sequence split over cp GPUs that run ring
  /// attention (docs/parallelism.md).
  std::int32_t cp = 1;
  /// Innermost first; `ep` (optional) places the expert-parallel part of dp (docs/moe.md), `cp`
  /// the context-parallel ranks (placed after tp when cp > 1 and no order is given).
  std::vector<std::string> order{"tp", "pp", "dp"};
  /// GPU of every rank, indexed by rank_index(); filled from the topology (or `placement`).
  std::vector<VertexId> gpus;
  DataParallelSpec data_parallel;
  bool sp = false;  // `parallelism.sp`: Megatron sequence parallelism (docs/models.md)
  /// `parallelism.sp_wgrad_input`: regather | keep (sim/costmodel/layer_work.h, docs/memory.md)
  SpWgradInput sp_wgrad_input = SpWgradInput::Regather;
  struct Zero {
    std::int32_t level = 0;  // `parallelism.zero`: 0..3, sharding across the dp x cp ranks
    /// `parallelism.zero_overlap`: levels 2 and 3 move their per-op collectives layer by layer
    /// behind the compute, as FSDP prefetches (docs/models.md); false: whole stage, exposed.
    bool overlap = true;
    bool overlap_given = false;           // `zero_overlap` was in the scenario (else the engine's)
    SourceLocation where, overlap_where;  // `parallelism.zero`, `zero_overlap` when given
  };
  Zero zero;
  /// `parallelism.ep`: expert parallelism over ep consecutive data-parallel ranks (docs/moe.md).
  std::int32_t ep = 1;
  /// What communication hides under compute.
  struct Overlap {
    bool a2a = false;  // `parallelism.a2a_overlap`: F and B hide each other's all-to-all
    /// `overlap.comm_sm_fraction`: the SMs an overlapped all-to-all takes from compute
    /// (docs/moe.md)
    double comm_sm_fraction = 0;
    /// `parallelism.tp_comm_overlap`: the sequence-parallel TP collectives pipelined with the
    /// GEMMs beside them, as Transformer Engine's userbuffers run them (docs/parallelism.md).
    bool tp_comm = false;
    /// `overlap.tp_comm_sms`: the SMs those collectives' kernels reserve from the GEMMs they run
    /// beside; unset: Transformer Engine's default (16) where the GPU's SM count is known.
    std::optional<std::int32_t> tp_comm_sms;
    /// Transformer Engine's userbuffers: the `pipeline` and `bulk` methods' default `num_sm`,
    /// reserved from the GEMM with `set_sm_margin` (transformer_engine/pytorch/module/base.py,
    /// initialize_ub's default config; the `ring_exchange` method takes 1 SM and no margin).
    static constexpr std::int32_t kTransformerEngineSms = 16;
    /// The share of a GPU of `gpu_sms` SMs that the overlapped TP collectives reserve: 0 without
    /// tp_comm_overlap or without a known SM count (`gpu_sms` 0), unless stated.
    double tp_comm_sm_share(std::int64_t gpu_sms) const {
      if (!tp_comm || gpu_sms <= 0) return 0.0;
      return static_cast<double>(tp_comm_sms.value_or(kTransformerEngineSms)) /
             static_cast<double>(gpu_sms);
    }
  };
  Overlap overlap;
  // costs.gradient_bytes (whole stage, before the TP split) and costs.optimizer_step (per GPU),
  // per pipeline stage; empty = derive.
  struct Given {
    std::vector<Bytes> gradient_bytes;
    std::vector<Time> optimizer_step;
  };
  Given given;
  SourceLocation where;

  /// Every GPU of the job. 64-bit: the keys' own limits allow more than 2^31 (dp 65536 x tp 1024
  /// x cp 1024 x stages), which the topology then refuses by name.
  std::int64_t world(std::int32_t stages) const { return std::int64_t{stages} * dp * tp * cp; }
  /// The GPUs that hold the same parameters and average their gradients: the dp replicas times
  /// their cp ranks (Megatron-Core's data-parallel group with context parallelism; ZeRO shards
  /// over it too).
  std::int32_t gradient_group() const { return dp * cp; }
  /// The GPUs one shard of the parameters is split over: the gradient group, divided by the
  /// HSDP replicate groups.
  std::int32_t shard_group() const { return dp * cp / std::max(data_parallel.replicate, 1); }
  /// Index of (pipeline stage s, dp replica r, tp rank t, cp rank c) in `gpus` for the mixed
  /// radix `order`.
  std::size_t rank_index(std::int32_t stages, std::int32_t s, std::int32_t r, std::int32_t t,
                         std::int32_t c = 0) const;
  /// Rank indices of stage s's expert data-parallel group e < ep: the GPUs holding the routed
  /// experts of EP rank e (dp ranks r with r mod ep = e, every TP rank of each: the experts are
  /// not split by TP), r then t ascending (docs/moe.md).
  std::vector<std::size_t> expert_group(std::int32_t stages, std::int32_t s, std::int32_t e) const;
};

/// One entry of `schedules:` — a generator name and its raw parameters, checked against the
/// generator's ParamSpecs by the loader.
struct ScheduleRequest {
  std::string name;
  ParamValues params;
  SourceLocation where;
  /// Not named by the user (`schedules:` was absent: every registered generator runs); a
  /// defaulted schedule that rejects the pipeline shape is skipped, not an error.
  bool defaulted = false;
};

/// The default of --max-ops: tables with more ops are refused before they are generated or
/// replayed (about 100 bytes of engine state per op: 50 million ops is a few GB).
inline constexpr std::int64_t kDefaultMaxOps = 50'000'000;

/// `run --stream`: when a schedule is replayed from its order stream instead of a table in memory
/// (sim/runner/stream_choice.h): auto beyond --max-ops, on always, off never.
enum class StreamMode { Auto, On, Off };

/// Which `costs:` values the scenario (or its measured profile) gave. With `model:` the others
/// are derived by the resolve step (docs/models.md); the given ones replace the derived ones.
struct CostFields {
  bool forward = false, backward_input = false, backward_weight = false, recompute = false,
       fused = false, activation = false, weight_grad = false, stage_input = false, p2p = false,
       static_memory = false;
  bool any() const {
    return forward || backward_input || backward_weight || recompute || fused || activation ||
           weight_grad || stage_input || p2p || static_memory;
  }
};

/// `costs.per`: whether explicit costs are one GPU's (after TP: taken as they are) or the whole
/// stage's (before TP: times and sizes divided by the TP degree; `recompute` never).
enum class CostBasis { Stage, Gpu };

/// `name:` and `description:`.
struct ScenarioLabels {
  std::string name;
  std::string description;
};

/// `costs:` as given (explicit values, `per_layer`, or a measured `profile`).
struct CostsSpec {
  CostProfile profile;  // the given costs per stage of the p-way split (`given` says which)
  CostFields given;     // which fields of `profile` were given
  CostBasis per = CostBasis::Stage;
  std::optional<MeasuredLayer> per_layer;  // `costs.per_layer` (one layer on one GPU)
  std::string source;  // "explicit", "transformer", "transformer+explicit" or "profile"
  /// The coefficients of variation of F, B and W per pipeline stage that `costs.profile` measured
  /// (its cv column); empty without one. `variability` uses them unless it gives a cv.
  std::vector<CvByKind> measured_cv;
  /// Where the scenario gives op times beside a model (costs.forward, costs.per_layer or
  /// costs.profile): the key and its place, for errors about them once the model's FLOPs are
  /// known (sim/runner/op_time_floor.h). Empty key: none given.
  std::string times_key;
  SourceLocation times_where;
  /// Mechanisms a preset or a default would turn on that cannot act on this cost form, each
  /// left off: the key and why (sections/cost_form_section.h; the reports list them).
  struct NotApplied {
    std::string key, reason;
  };
  std::vector<NotApplied> not_applied;
};

/// Settings from the command line, not from the file: resource limits and how to replay. The
/// results do not depend on them (but for a table refused as too large).
struct CommandLineSettings {
  /// --max-ops: tables with more ops are refused before they are generated or replayed.
  std::int64_t max_ops = kDefaultMaxOps;
  /// --stream: when to replay order streams instead of tables.
  StreamMode stream = StreamMode::Auto;
  /// Monte Carlo worker threads (--threads); 0 = every hardware thread.
  int threads = 0;
};

/// One member per section of the scenario file (sim/scenario/sections/).
struct Scenario {
  ScenarioLabels labels;
  std::string file;               // path it was loaded from ("" for built in memory)
  std::int32_t stages = 0;        // p: pipeline stages = devices
  std::int32_t microbatches = 0;  // m
  /// Where m was given (pipeline.microbatches, or training.global_batch it follows from): for
  /// errors about how long the schedule runs once its op times are known.
  SourceLocation microbatches_where;
  CostsSpec costs;
  std::optional<TransformerModel> model;
  std::optional<GpuSpec> gpu;
  CommunicationSpec communication;
  MemorySpec memory;
  FaultSpec faults;
  ParallelismSpec parallelism;  // dp, tp, gradient sync (docs/parallelism.md)
  IterationSpec iteration;
  std::vector<ScheduleRequest> schedules;
  /// `variability:` (docs/variability.md): op times as distributions, Monte Carlo replays. Unset:
  /// every replay is deterministic.
  std::optional<VariabilitySpec> variability;
  CommandLineSettings command_line;
};

}  // namespace bubblesim
