#pragma once
// The tied-embedding gradient all-reduce (`model.tied_embeddings`; docs/iterations.md). When the
// LM head reuses the word embedding and the pipeline has more than one stage, the device holding
// the first stage and the device holding the last keep copies of the same vocab x hidden matrix
// and all-reduce its gradient after their last op of every iteration (Megatron-LM's embedding
// group). The resolve step times it; the engine runs it as an IterationPlan::PairSync.

#include <vector>

#include "schedules/table.h"
#include "sim/engine/iteration_plan.h"
#include "sim/scenario/scenario.h"
#include "sim/units/time.h"

namespace bubblesim {

/// What one tied-embedding all-reduce moves and, under fixed-delay, how long it takes.
struct TiedEmbeddingSync {
  double bytes = 0;  // per GPU: vocab / tp x hidden x dtype bytes; 0 = no sync
  Time fixed_delay;  // fixed-delay: bytes / cluster.gpu.nvlink_bandwidth (a 2-rank ring)
};

/// The sync of a scenario: none without a tied model with a vocabulary on more than one stage.
/// Throws InputError (at `model`) under fixed-delay when cluster.gpu gives no NVLink bandwidth:
/// the one delay of fixed-delay describes a stage-to-stage activation transfer, not this one.
TiedEmbeddingSync resolve_tied_embedding(const Scenario& scenario);

/// Per replica of `table`: the device holding its first table stage and the one holding its
/// last, when they differ (a V-shaped placement keeps both on device 0: no sync), with the
/// all-reduce's time (under a topology: as flows on the otherwise idle network).
std::vector<PairSync> tied_embedding_pairs(const Scenario& scenario, const TiedEmbeddingSync& sync,
                                           const Table& table);

}  // namespace bubblesim
