#pragma once
// Which algorithm a collective runs and how it is timed (docs/parallelism.md, "NCCL's
// algorithms"): the scenario's `data_parallel.algorithm`, or with `auto` and NCCL's tuning model
// on (`first_principles.nccl_tuning`) NCCL's own choice for the collective, its group's shape and
// its size. Under NCCL's model the flows of collective_layout.h carry the bytes and the
// collective takes NCCL's latency after them, never less than the bytes over NCCL's bandwidth
// (ModelTiming); without it the flows pay the topology's route latencies.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/collective_layout.h"
#include "topologies/nccl/nccl_graph.h"

namespace bubblesim {

/// How collectives are chosen and laid out: the scenario's `data_parallel` keys and whether
/// NCCL's tuning model runs (the GPU's generation when it does).
struct CollectiveOptions {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  RingSteps ring_steps = RingSteps::Pipelined;
  CollectiveChannels channels = CollectiveChannels::Nics;
  std::optional<nccl::Arch> nccl;
  /// The factor the topology's NIC links were scaled by (first_principles.nccl's
  /// net_efficiency): NCCL's search sees the line rates.
  double nic_scale = 1.0;
};

/// One collective as it will run.
struct CollectivePlan {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  // what runs (never Auto)
  std::string protocol;  // NCCL's protocol ("LL", "LL128", "Simple"); "" without its model
  CollectiveLayout layout;
  std::optional<ModelTiming> timing;  // NCCL's latency and bandwidth floor
  Time predicted;  // NCCL's predicted time, or the alpha-beta closed form without its model
};

class CollectivePlanner {
 public:
  CollectivePlanner(const Topology& topology, CollectiveOptions options);
  ~CollectivePlanner();
  CollectivePlanner(const CollectivePlanner&) = delete;
  CollectivePlanner& operator=(const CollectivePlanner&) = delete;

  /// `kind` of `bytes` (S, the whole buffer per rank) over `ranks`, with the options' algorithm
  /// or `algorithm`. Throws InputError when the scenario forces an algorithm NCCL does not run
  /// for this collective here (e.g. pat for an all-reduce, nvls without an NVSwitch), naming
  /// `data_parallel.algorithm`. `ring`: the ring steps without NCCL's model, else the options'
  /// (CollectiveLauncher lays out pipelined and cuts the steps itself).
  CollectivePlan plan(const std::vector<VertexId>& ranks, CollectiveKind kind, double bytes,
                      std::optional<CollectiveAlgorithm> algorithm = std::nullopt,
                      std::optional<RingSteps> ring = std::nullopt) const;
  const CollectiveOptions& options() const { return options_; }
  const Topology& topology() const { return *topology_; }
  /// NCCL's tuning model of the communicator over `ranks` (nullopt without it).
  const nccl::Tuning* tuning(const std::vector<VertexId>& ranks) const;

 private:
  struct Group;
  const Group& group(const std::vector<VertexId>& ranks) const;
  const Topology* topology_;
  CollectiveOptions options_;
  std::unique_ptr<nccl::NodeReader> reader_;
  mutable std::map<std::vector<VertexId>, std::unique_ptr<Group>> groups_;
};

/// The bytes nccl-tests count as crossing the bus for `kind` of `bytes` over `ranks` (its busbw is
/// these over the time): 2 (n-1)/n S for an all-reduce, (n-1)/n S for the others.
double bus_bytes(CollectiveKind kind, double bytes, std::int32_t ranks);
/// "tree" or "tree/LL128": the algorithm and NCCL's protocol, as reports name a plan.
std::string plan_name(const CollectivePlan& plan);

/// Runs one collective alone on the idle topology as `planner` plans it.
CollectiveTiming simulate_planned(const CollectivePlanner& planner,
                                  const std::vector<VertexId>& ranks, CollectiveKind kind,
                                  double bytes, CollectivePlan* plan_out = nullptr,
                                  std::optional<CollectiveAlgorithm> algorithm = std::nullopt);

}  // namespace bubblesim
