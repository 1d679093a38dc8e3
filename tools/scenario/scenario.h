#pragma once
// Scenario: a validated, fully resolved description of one simulation problem, as loaded from a
// scenario YAML file (see scenario_loader.h). Defaults are filled in; costs are resolved to a
// per-stage CostProfile whether the file gave them explicitly or as a transformer description.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "schedules/parameter.h"
#include "schedules/passes/memory_passes.h"
#include "schedules/stage_costs.h"
#include "sim/engine/engine_input.h"
#include "sim/units/bytes.h"
#include "sim/units/diagnostics.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "tools/scenario/parallelism.h"
#include "topologies/topology.h"

namespace bubblesim {

/// `model:` — a GPT-style transformer; costs are derived from it (see transformer_costs.h).
struct TransformerModel {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t micro_batch_size = 1;
  std::int64_t vocab = 0;
  std::int64_t dtype_bytes = 2;  // bf16/fp16 = 2, fp32 = 4
  std::string dtype = "bf16";
};

/// `cluster.gpu:` — the GPU that runs every stage.
struct GpuSpec {
  FlopRate flops;           // peak
  double efficiency = 1.0;  // fraction of peak achieved
  std::optional<Bytes> memory;
  std::optional<Bandwidth> memory_bandwidth;  // HBM: the optimizer step's default cost
};

enum class CommunicationKind { FixedDelay, Topology };

struct CommunicationSpec {
  CommunicationKind kind = CommunicationKind::FixedDelay;
  Time delay;                                // FixedDelay: added on every cross-stage edge
  std::shared_ptr<const Topology> topology;  // Topology: the cluster graph
  std::vector<VertexId> placement;           // device (pipeline rank) -> GPU vertex
};

/// `memory:` — budgets, host memory, the release convention and the memory passes
/// (docs/memory.md).
struct MemorySpec {
  std::vector<Bytes> budget;  // empty: no budget; one value: every device; else per device
  std::optional<Bytes>
      host_capacity;  // per host vertex (or the one host of fixed-delay); unset: unlimited
  ReleaseConvention release = ReleaseConvention::Split;
  OffloadSettings offload;  // d2h / h2d are filled per run from the route (or bandwidth)
  std::optional<Bandwidth> offload_bandwidth;  // fixed-delay only: a private PCIe link per GPU
  RecomputeSettings recompute;
  SourceLocation offload_where, recompute_where;  // for errors found when a table is known
};

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

/// One entry of `schedules:` — a generator name and its raw parameters, checked against the
/// generator's ParamSpecs by the loader.
struct ScheduleRequest {
  std::string name;
  ParamValues params;
  SourceLocation where;
};

/// The default of --max-ops: tables with more ops are refused before they are generated or
/// replayed (about 100 bytes of engine state per op: 50 million ops is a few GB).
inline constexpr std::int64_t kDefaultMaxOps = 50'000'000;

struct Scenario {
  std::string name;
  std::string file;               // path it was loaded from ("" for built in memory)
  std::int32_t stages = 0;        // p: pipeline stages = devices
  std::int32_t microbatches = 0;  // m
  CostProfile costs;              // per stage of the p-way split
  std::optional<TransformerModel> model;
  std::optional<GpuSpec> gpu;
  CommunicationSpec communication;
  MemorySpec memory;
  FaultSpec faults;
  ParallelismSpec parallelism;  // dp, tp, gradient sync (docs/parallelism.md)
  std::vector<ScheduleRequest> schedules;
  bool schedules_defaulted = false;  // `schedules:` was absent: every registered generator
  /// A resource limit from the command line (--max-ops), not from the file.
  std::int64_t max_ops = kDefaultMaxOps;
  /// The scenario as resolved (defaults filled, quantities in base units), for reports.
  nlohmann::json resolved;
};

}  // namespace bubblesim
