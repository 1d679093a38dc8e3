#include "sim/engine/collective_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

/// The NCCL algorithms a scenario's algorithm stands for (CollNet: Direct or Chain, the faster).
std::vector<nccl::Algo> nccl_algos(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Ring:
      return {nccl::Algo::Ring};
    case CollectiveAlgorithm::Tree:
      return {nccl::Algo::Tree};
    case CollectiveAlgorithm::Nvls:
      return {nccl::Algo::Nvls};
    case CollectiveAlgorithm::NvlsTree:
      return {nccl::Algo::NvlsTree};
    case CollectiveAlgorithm::Pat:
      return {nccl::Algo::Pat};
    case CollectiveAlgorithm::CollNet:
      return {nccl::Algo::CollNetDirect, nccl::Algo::CollNetChain};
    default:
      return {};
  }
}

CollectiveAlgorithm from_nccl(nccl::Algo a) {
  switch (a) {
    case nccl::Algo::Tree:
      return CollectiveAlgorithm::Tree;
    case nccl::Algo::Ring:
      return CollectiveAlgorithm::Ring;
    case nccl::Algo::CollNetDirect:
    case nccl::Algo::CollNetChain:
      return CollectiveAlgorithm::CollNet;
    case nccl::Algo::Nvls:
      return CollectiveAlgorithm::Nvls;
    case nccl::Algo::NvlsTree:
      return CollectiveAlgorithm::NvlsTree;
    case nccl::Algo::Pat:
      return CollectiveAlgorithm::Pat;
  }
  return CollectiveAlgorithm::Ring;
}

}  // namespace

struct CollectivePlanner::Group {
  RankPlaces places;
  NodeGroups groups;
  std::int32_t nodes = 1;
  mutable std::optional<AlphaBeta> alpha_beta;  // measured on first use (closed forms)
  std::optional<nccl::Tuning> tuning;
};

CollectivePlanner::CollectivePlanner(const Topology& topology, CollectiveOptions options)
    : topology_(&topology), options_(options) {
  if (options_.nccl)
    reader_ = std::make_unique<nccl::NodeReader>(topology, *options_.nccl, options_.nic_scale);
}

CollectivePlanner::~CollectivePlanner() = default;

const CollectivePlanner::Group& CollectivePlanner::group(const std::vector<VertexId>& ranks) const {
  auto it = groups_.find(ranks);
  if (it != groups_.end()) return *it->second;
  auto g = std::make_unique<Group>();
  g->places = rank_places(*topology_, ranks);
  g->groups = node_groups(g->places, options_.channels);
  g->nodes = static_cast<std::int32_t>(g->groups.members.size());
  if (reader_ && ranks.size() > 1) {
    // NCCL keeps the least of every rank's graphs: the slowest node's view.
    std::vector<nccl::NodeView> views;
    for (const auto& m : g->groups.members) {
      std::vector<VertexId> gpus;
      for (std::int32_t r : m) gpus.push_back(ranks[static_cast<std::size_t>(r)]);
      views.push_back(reader_->read(gpus));
    }
    g->tuning.emplace(nccl::communicator(nccl::NodeReader::slowest(views), *options_.nccl,
                                         static_cast<std::int32_t>(ranks.size()), g->nodes));
  }
  return *groups_.emplace(ranks, std::move(g)).first->second;
}

const nccl::Tuning* CollectivePlanner::tuning(const std::vector<VertexId>& ranks) const {
  const Group& g = group(ranks);
  return g.tuning ? &*g.tuning : nullptr;
}

CollectivePlan CollectivePlanner::plan(const std::vector<VertexId>& ranks, CollectiveKind kind,
                                       double bytes, std::optional<CollectiveAlgorithm> algorithm,
                                       std::optional<RingSteps> ring) const {
  const Group& cg = group(ranks);
  CollectivePlan out;
  const auto n = static_cast<std::int32_t>(ranks.size());
  const CollectiveAlgorithm asked = algorithm.value_or(options_.algorithm);
  if (cg.tuning && asked != CollectiveAlgorithm::Hierarchical) {
    std::optional<nccl::Prediction> best;
    if (asked == CollectiveAlgorithm::Auto) {
      best = cg.tuning->choose(kind, bytes);
    } else {
      for (nccl::Algo a : nccl_algos(asked)) {
        auto p = cg.tuning->choose(kind, bytes, a);
        if (p && (!best || p->time_us < best->time_us)) best = p;
      }
      if (!best) {
        throw InputError(fmt::format(
            "data_parallel.algorithm: {} does not run this {} over {} ranks on {} node(s): "
            "NCCL runs tree only for all-reduce, pat only for all-gather and reduce-scatter with "
            "one GPU per node, nvls and nvls_tree only on an NVSwitch of Hopper or later "
            "(nvls_tree "
            "across nodes, nvls inside one), collnet only on a SHARP switch (allowed: auto, ring, "
            "tree, nvls, nvls_tree, pat, collnet, hierarchical)",
            collective_algorithm_name(asked), collective_kind_name(kind), n, cg.nodes));
      }
    }
    if (best) {
      out.layout = lay_out(kind, from_nccl(best->algo), bytes, cg.places, cg.groups,
                           RingSteps::Pipelined, false);
      out.algorithm = out.layout.algorithm;
      out.protocol = std::string(nccl::proto_name(best->proto));
      out.timing = ModelTiming{Time::from_seconds(bytes / (best->bandwidth * 1e9)),
                               Time::from_seconds(best->latency_us * 1e-6)};
      out.predicted = Time::from_seconds(best->time_us * 1e-6);
      return out;
    }
  }
  const CollectiveAlgorithm run =
      asked == CollectiveAlgorithm::Auto ? CollectiveAlgorithm::Ring : asked;
  out.layout =
      lay_out(kind, run, bytes, cg.places, cg.groups, ring.value_or(options_.ring_steps), true);
  out.algorithm = out.layout.algorithm;
  if (!cg.alpha_beta) cg.alpha_beta = measure_alpha_beta(*topology_, ranks);
  out.predicted = collective_closed_form(kind, out.algorithm, bytes, n, cg.nodes, *cg.alpha_beta,
                                         out.layout.channels);
  return out;
}

double bus_bytes(CollectiveKind kind, double bytes, std::int32_t ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  return (kind == CollectiveKind::AllReduce ? 2.0 : 1.0) * (n - 1) / n * bytes;
}

std::string plan_name(const CollectivePlan& plan) {
  std::string name(collective_algorithm_name(plan.algorithm));
  if (!plan.protocol.empty() && plan.protocol != "Simple") name += "/" + plan.protocol;
  return name;
}

CollectiveTiming simulate_planned(const CollectivePlanner& planner,
                                  const std::vector<VertexId>& ranks, CollectiveKind kind,
                                  double bytes, CollectivePlan* plan_out,
                                  std::optional<CollectiveAlgorithm> algorithm) {
  CollectivePlan plan = planner.plan(ranks, kind, bytes, algorithm);
  CollectiveInstance c(planner.topology(), plan.layout.endpoints, plan.layout.steps, plan.timing);
  run_alone(c, planner.topology());
  CollectiveTiming out;
  out.simulated = c.end_time() - c.start_time();
  out.closed_form = plan.predicted;
  out.link_slices = c.link_slices();
  out.algorithm = plan_name(plan);
  if (plan_out) *plan_out = std::move(plan);
  return out;
}

}  // namespace bubblesim
