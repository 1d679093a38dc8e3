#pragma once
// The engine's A2aPlan (sim/engine/expert_exchange.h) for one table under a scenario's expert
// parallelism (docs/moe.md, "What the all-to-all contends with").

#include <cstdint>
#include <memory>
#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/expert_exchange.h"
#include "sim/runner/resolve.h"

namespace bubblesim {

/// Whether the scenario runs its expert all-to-all as flows of the replay: a topology,
/// `communication.all_to_all: shared` (the default) and parallelism.ep > 1.
bool a2a_as_flows(const Scenario& scenario);

/// Null unless a2a_as_flows and some stage of `stage_costs` (per table stage) has an all-to-all.
/// Device d's group is the EP group of dp rank 0 at pipeline rank d, TP rank 0.
std::shared_ptr<const A2aPlan> make_a2a_plan(const ResolvedScenario& resolved, const Table& table,
                                             const std::vector<StageCost>& stage_costs);

/// The GPUs of the EP group of dp rank 0 at pipeline rank `stage`, TP rank 0: its ep consecutive
/// dp ranks (parallelism.order), [0] the simulated replica's GPU.
std::vector<VertexId> ep_group(const Scenario& scenario, std::int32_t stage);

/// The share of its bytes a flow between GPUs of different nodes of `group` carries: with
/// `moe.max_nodes` a token goes to at most min(max_nodes, nodes) nodes, once per node, instead
/// of top_k times; 1 without it.
double a2a_cross_node_factor(const Scenario& scenario, const std::vector<VertexId>& group);

/// What simulate_all_to_all's result depends on besides the bytes, as numbers: for each ordered
/// pair of ranks whether they are on different nodes and their route's links, each named by its
/// first appearance with its bandwidth and latency. Two groups with equal shapes build the same
/// flows over links shared alike with the same capacities, so their all-to-alls take the same
/// time (a group and its copy on other nodes of a regular cluster). Empty above
/// kMaxCollectiveFlows (simulate_all_to_all refuses those); std::invalid_argument when two ranks
/// have no route.
std::vector<std::int64_t> all_to_all_shape(const Topology& topology,
                                           const std::vector<VertexId>& gpus);

}  // namespace bubblesim
