#include "sim/runner/a2a_plan.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <unordered_map>

#include "sim/engine/collectives.h"

namespace bubblesim {

bool a2a_as_flows(const Scenario& scenario) {
  return scenario.communication.kind == CommunicationKind::Topology &&
         scenario.communication.all_to_all == AllToAllNetwork::Shared &&
         scenario.parallelism.enabled && scenario.parallelism.ep > 1 && scenario.model &&
         scenario.model->moe;
}

std::vector<VertexId> ep_group(const Scenario& scenario, std::int32_t stage) {
  const ParallelismSpec& par = scenario.parallelism;
  std::vector<VertexId> group;
  for (std::int32_t i = 0; i < par.ep; ++i)
    group.push_back(par.gpus[par.rank_index(scenario.stages, stage, i, 0)]);
  return group;
}

double a2a_cross_node_factor(const Scenario& scenario, const std::vector<VertexId>& group) {
  const MoeSpec& moe = *scenario.model->moe;
  if (moe.max_nodes <= 0) return 1.0;
  std::vector<std::int32_t> nodes = node_of_gpus(*scenario.communication.topology, group);
  std::sort(nodes.begin(), nodes.end());
  const auto distinct = std::unique(nodes.begin(), nodes.end()) - nodes.begin();
  return std::min(1.0, static_cast<double>(std::min<std::int64_t>(moe.max_nodes, distinct)) /
                           static_cast<double>(moe.top_k));
}

std::vector<std::int64_t> all_to_all_shape(const Topology& topology,
                                           const std::vector<VertexId>& gpus) {
  const auto n = static_cast<std::int64_t>(gpus.size());
  if (n * (n - 1) > kMaxCollectiveFlows) return {};  // simulate_all_to_all refuses it
  const std::vector<std::int32_t> node = node_of_gpus(topology, gpus);
  std::unordered_map<LinkId, std::int64_t> seen;  // link -> its first appearance
  std::vector<std::int64_t> shape{static_cast<std::int64_t>(gpus.size())};
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) continue;
      const std::optional<Route> r = topology.route(gpus[i], gpus[j]);
      if (!r) {
        throw std::invalid_argument("no route between " + topology.vertex_name(gpus[i]) + " and " +
                                    topology.vertex_name(gpus[j]) + " for a collective");
      }
      shape.push_back(node[i] != node[j] ? 1 : 0);
      shape.push_back(static_cast<std::int64_t>(r->links.size()));
      for (LinkId l : r->links) {
        const auto [it, fresh] = seen.try_emplace(l, static_cast<std::int64_t>(seen.size()));
        shape.push_back(it->second);
        if (!fresh) continue;  // its capacity and latency are already in the shape
        shape.push_back(static_cast<std::int64_t>(
            std::bit_cast<std::uint64_t>(topology.link_bandwidth(l).bytes_per_second())));
        shape.push_back(topology.link_latency(l).ps());
      }
    }
  }
  return shape;
}

std::shared_ptr<const A2aPlan> make_a2a_plan(const ResolvedScenario& resolved, const Table& table,
                                             const std::vector<StageCost>& stage_costs) {
  const Scenario& scenario = *resolved.scenario;
  if (!a2a_as_flows(scenario)) return nullptr;
  const bool any = std::any_of(stage_costs.begin(), stage_costs.end(), [](const StageCost& c) {
    return c.moe.a2a_bytes > Bytes::zero() &&
           (c.moe.a2a_count_forward > 0 || c.moe.a2a_count_backward > 0);
  });
  const ParallelismSpec& par = scenario.parallelism;
  if (!any || par.gpus.size() != static_cast<std::size_t>(par.world(scenario.stages)))
    return nullptr;
  auto plan = std::make_shared<A2aPlan>();
  const auto devices = static_cast<std::size_t>(table.devices);
  plan->groups.resize(devices);
  plan->cross_node_factor.assign(devices, 1.0);
  for (std::size_t d = 0; d < devices; ++d) {
    plan->groups[d] = ep_group(scenario, static_cast<std::int32_t>(d));
    plan->cross_node_factor[d] = a2a_cross_node_factor(scenario, plan->groups[d]);
  }
  for (std::int32_t s = 0; s < table.stages; ++s) {
    const StageCost& c = stage_costs[static_cast<std::size_t>(s)];
    A2aPlan::Stage st;
    st.bytes = c.moe.a2a_bytes.as_double();
    st.forward = c.moe.a2a_count_forward;
    st.backward = c.moe.a2a_count_backward;
    plan->stages.push_back(st);
  }
  return plan;
}

}  // namespace bubblesim
