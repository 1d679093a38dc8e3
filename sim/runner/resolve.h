#pragma once
// resolve: the one conversion from a Scenario (what the file says) to what the generators and the
// engine take. Every value derived from a scenario is computed here, once:
//   memory_budget  per device (memory_budget_of_device: one value means every device)
//   costs          per pipeline stage (and chunk) on one GPU: the transformer's derived costs
//                  (resolve_costs.h) with explicit values in place, TP collectives (timed as
//                  flows on the stage's TP group) added to F, B and R
//   sync           gradient bytes, optimizer time and TP times per stage (docs/parallelism.md)
//   offload        per device, the bandwidth of the route to and from its host (or
//                  memory.offload.bandwidth under fixed-delay)
//   routes         per neighbouring device pair, the route's bottleneck bandwidth and latency
//   iterations     the optimizer step per stage and, per device, what ends an iteration,
//                  the tied-embedding all-reduce included (tied_embedding.h, docs/iterations.md)
// make_generator_input and make_engine_input build the inputs from it; nothing else derives them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedules/generator.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/collectives.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/sync_metrics.h"
#include "sim/runner/tied_embedding.h"
#include "sim/scenario/scenario.h"
#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

/// Per device, the bottleneck bandwidth of the GPU -> host route (d2h) and back (h2d). Empty when
/// the scenario has neither a host reachable from every GPU nor memory.offload.bandwidth.
struct OffloadBandwidths {
  std::vector<Bandwidth> d2h, h2d;
};

/// With a topology: the bottleneck bandwidth and latency of the route from device a to each
/// neighbour b (|a - b| = 1): 2p entries, 2a to a + 1 and 2a + 1 to a - 1 (as
/// GeneratorInput::route_bandwidth). Empty under fixed-delay communication.
struct RouteEstimates {
  std::vector<Bandwidth> bandwidth;
  std::vector<Time> latency;
};

/// Per pipeline stage of the p-way split (docs/parallelism.md); empty without parallelism.
struct SyncCosts {
  std::vector<Bytes> gradient_bytes;  // per GPU, after the TP split
  /// The routed experts' part of gradient_bytes, synchronised over the GPUs that hold the same
  /// experts (expert_groups; docs/moe.md); empty when every parameter syncs over the dp group.
  std::vector<Bytes> expert_gradient_bytes;
  std::vector<Time> optimizer;                // per GPU holding the stage
  std::vector<Time> tp_forward, tp_backward;  // TP all-reduce time inside F and B (in `costs`)
  /// The collectives inside ops, for the report: TP's per stage and context parallelism's ring.
  std::vector<CollectiveSummary> tp_summaries;
  /// ZeRO >= 1: gradients reduce-scattered (not all-reduced); levels 1 and 2: the updated
  /// parameters all-gathered after the optimizer step, per GPU holding the stage.
  CollectiveKind gradient_collective = CollectiveKind::AllReduce;
  /// false: no end-of-step gradient collective (ZeRO 2/3 reduce inside every microbatch's ops).
  bool end_runs = true;
  /// Per stage: the parameter all-gather's exposed time where the engine runs it
  /// (DataParallelSemantics::gather); empty = none.
  std::vector<Time> parameter_gather;
  /// Per stage: the FSDP units its gradients are reduce-scattered in (FSDP2 under a pipeline).
  std::vector<std::int64_t> units;
  /// Per stage: ZeRO 2/3's exposed collectives inside an F, a B and a W (their zero_comm parts);
  /// empty = none.
  std::vector<Time> dp_gather_forward, dp_gather_backward, dp_reduce_scatter;
};

/// A scenario with everything derived from it. Refers to the Scenario, which must outlive it.
struct ResolvedScenario {
  const Scenario* scenario = nullptr;
  CostProfile costs;                 // per pipeline stage, as generators and the engine see them
  std::vector<Bytes> memory_budget;  // per device; empty = no budget
  OffloadBandwidths offload;
  RouteEstimates routes;
  SyncCosts sync;
  /// Per pipeline stage: the optimizer step of one GPU holding it (costs.optimizer_step, else
  /// Adam's pass over the stage's static memory at cluster.gpu.memory_bandwidth); empty when
  /// neither is known (the iteration then has no step).
  std::vector<Time> optimizer_step;
  Time barrier;  // the global barrier's own time (a one-value all-reduce); zero under fixed-delay
  TiedEmbeddingSync tied_embedding;  // model.tied_embeddings: the first/last-stage all-reduce
  /// With `model:`: every stage's (and chunk's) derived costs with their parts, before explicit
  /// `costs` replaced any (docs/models.md).
  std::optional<ModelCosts> model_costs;
  std::string base_dir;  // the scenario file's folder, for relative paths in parameters
};

/// Derives everything above. Throws InputError (at `parallelism`) when a TP group's all-reduce
/// cannot be timed on the topology.
ResolvedScenario resolve(const Scenario& scenario);

/// The generator input for one schedule's parameters.
GeneratorInput make_generator_input(const ResolvedScenario& resolved, const ParamValues& params);

/// Which replay an engine input is for.
enum class Replay {
  Idealized,  // the table level: no communication, no budget, copies take no time, no faults
  Simulated,  // the scenario's communication, memory, parallelism and faults
  FaultFree,  // Simulated without the faults (the report's "effect of the faults")
};

/// Engine input for replaying `table` (with `stage_costs` per table stage) under the scenario.
EngineInput make_engine_input(const ResolvedScenario& resolved, const Table& table,
                              const std::vector<StageCost>& stage_costs, Replay replay);

}  // namespace bubblesim
