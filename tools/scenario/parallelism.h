#pragma once
// Scenario keys for data, tensor and replica parallelism (docs/parallelism.md):
//   parallelism:   {dp: D, tp: T, order: [tp, pp, dp]}   rank layout, innermost first
//   data_parallel: {bucket: 25MiB, overlap: true, algorithm: ring|tree|hierarchical,
//                   replica_sync: true}
// and the derived per-stage quantities the runner turns into a SyncPlan.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/collectives.h"
#include "sim/engine/sync_metrics.h"
#include "sim/units/bytes.h"
#include "sim/units/diagnostics.h"
#include "sim/units/time.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology.h"

namespace bubblesim {

struct ParallelismSpec {
  bool enabled = false;  // `parallelism:` or `data_parallel:` given
  std::int32_t dp = 1;
  std::int32_t tp = 1;
  std::vector<std::string> order{"tp", "pp", "dp"};  // innermost first
  /// GPU of every rank, indexed by rank_index(); filled from the topology (or `placement`).
  std::vector<VertexId> gpus;
  // data_parallel:
  Bytes bucket = Bytes(25LL * 1024 * 1024);
  bool overlap = true;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  bool replica_sync = true;
  // Per pipeline stage of the p-way split (after the TP split):
  std::vector<Bytes> gradient_bytes;          // per GPU
  std::vector<Time> optimizer;                // per GPU holding the stage
  std::vector<Time> tp_forward, tp_backward;  // TP all-reduce time inside F and B (already added)
  std::vector<CollectiveSummary> tp_summaries;
  SourceLocation where;

  std::int32_t world(std::int32_t stages) const { return stages * dp * tp; }
  /// Index of (pipeline stage s, dp replica r, tp rank t) in `gpus` for the mixed radix `order`.
  std::size_t rank_index(std::int32_t stages, std::int32_t s, std::int32_t r, std::int32_t t) const;
};

struct Scenario;

/// Explicit per-stage inputs of the costs section (empty = derive).
struct ParallelCostInputs {
  std::vector<Bytes> gradient_bytes;  // whole stage, before the TP split
  std::vector<Time> optimizer_step;   // per GPU, as given
};

/// After costs and communication are resolved: the TP split of costs (times, activation, p2p,
/// static memory divided by T), TP all-reduce time added to F and B (transformer model only:
/// 2 all-reduces of s b h dtype bytes per layer in each, timed as flows on the stage's TP group),
/// gradient bytes and optimizer time per stage. Errors go to `diags` located at spec.where.
void resolve_parallel_costs(Scenario& sc, const ParallelCostInputs& inputs, DiagnosticList& diags);

/// Reads `parallelism:` and `data_parallel:` (either may be absent).
void read_parallelism(const std::optional<YamlNode>& parallelism,
                      const std::optional<YamlNode>& data_parallel, ParallelismSpec& spec,
                      DiagnosticList& diags);

}  // namespace bubblesim
