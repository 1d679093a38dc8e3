#pragma once
// Collectives as point-to-point flows (docs/parallelism.md).
//
// A collective over n ranks is decomposed into steps; every transfer of a step is a flow over the
// route between its two GPUs, and a step starts when every transfer of the previous step has
// arrived (its last byte plus the route latency). Flows share links by max-min fairness with
// everything else on the network, so collectives contend with pipeline traffic and offload.
//
//   ring all-reduce       2(n-1) steps; in each, rank i sends S/n bytes to rank i+1 (mod n)
//                         (n-1 reduce-scatter steps, then n-1 all-gather steps)
//   ring reduce-scatter   the first n-1 of those steps; ring all-gather: the last n-1
//   tree all-reduce       binomial tree: ceil(log2 n) reduce steps (rank i with bit k set sends
//                         S to i - 2^k in step k) then the same steps reversed (broadcast)
//   hierarchical          ring reduce-scatter inside every node (concurrently), ring all-reduce
//                         of the S/L shard among the ranks with the same local index across
//                         nodes, ring all-gather inside every node (L ranks per node; nodes
//                         must hold equally many ranks, else it falls back to ring)
// Alpha-beta closed forms (alpha = route latency, B = bottleneck bandwidth of a step's route):
//   ring all-reduce       2(n-1) (S/(nB) + alpha)
//   ring RS / AG          (n-1) (S/(nB) + alpha)
//   tree all-reduce       2 ceil(log2 n) (S/B + alpha)
//   hierarchical          2(L-1)(S/(L B_in) + a_in) + 2(N-1)(S/(L N B_out) + a_out)

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/collective_algorithm.h"
#include "topologies/topology.h"

namespace bubblesim {

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };
std::string_view collective_kind_name(CollectiveKind k);  // "all-reduce", ...

struct CollectiveTransfer {
  std::int32_t from = 0;  // rank
  std::int32_t to = 0;
  double bytes = 0.0;
  /// Route latencies paid after the last byte: more than one when the transfer stands for that
  /// many pipelined ring steps (RingSteps::Pipelined).
  std::int32_t latencies = 1;
};
using CollectiveStep = std::vector<CollectiveTransfer>;

/// Most flows one collective may simulate (a flat ring over n ranks is 2(n - 1) steps of n flows:
/// about 2900 ranks; an all-to-all is n(n - 1) flows: 4096 ranks). collective_steps and
/// simulate_all_to_all refuse more with an InputError naming this limit.
inline constexpr std::int64_t kMaxCollectiveFlows = std::int64_t{1} << 24;

/// The steps of a collective of `bytes` (S, the full buffer per rank) over `node_of_rank.size()`
/// ranks; node_of_rank groups ranks by node (hierarchical only). One rank: no steps.
std::vector<CollectiveStep> collective_steps(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                             double bytes,
                                             const std::vector<std::int32_t>& node_of_rank,
                                             RingSteps ring = RingSteps::Pipelined);

/// Link parameters of the closed form: inside a node and between nodes (equal when flat).
struct AlphaBeta {
  Bandwidth intra, inter;
  Time alpha_intra, alpha_inter;
};

/// The alpha-beta closed form above. Hierarchical with N = 1 or L = 1 reduces to ring.
Time collective_closed_form(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                            std::int32_t ranks, std::int32_t nodes, const AlphaBeta& link);

/// Node of each GPU: its nearest host vertex (GPUs without a host: each its own node).
std::vector<std::int32_t> node_of_gpus(const Topology& topology, const std::vector<VertexId>& gpus);

/// The closed form's parameters measured on the topology: bottleneck bandwidth and latency of the
/// worst route between consecutive ranks of the same node (intra) and of different nodes (inter).
AlphaBeta measure_alpha_beta(const Topology& topology, const std::vector<VertexId>& gpus);

/// Where flows and timers go: the engine's network and event queue, or a standalone driver.
class FlowPort {
 public:
  virtual ~FlowPort() = default;
  /// A flow of `bytes` over `links`; `token` comes back through on_token at its arrival (finish
  /// + latency). `weight`: how many identical flows it stands for (MaxMinFlows::add).
  virtual void add_flow(const std::vector<LinkId>& links, double bytes, Time latency,
                        std::uint32_t token, Time now, double weight = 1.0) = 0;
  /// `token` comes back at `at`.
  virtual void add_timer(Time at, std::uint32_t token) = 0;
};

/// Link activity of one flow of a collective, for traces.
struct CollectiveLinkSlice {
  LinkId link;
  Time start, end;
};

/// The route from `a` to `b`, searched once and kept in `cache`; throws std::invalid_argument
/// when the topology has none (a collective's ranks must be connected).
const Route& cached_route(const Topology& topology,
                          std::map<std::pair<VertexId, VertexId>, Route>& cache, VertexId a,
                          VertexId b);

/// One collective in flight: walks its steps, each step's flows started when the previous step's
/// flows have all arrived.
class CollectiveInstance {
 public:
  CollectiveInstance(const Topology& topology, std::vector<VertexId> ranks,
                     std::vector<CollectiveStep> steps);
  /// Starts step 0 (or finishes at once when there are no steps). `token` identifies this
  /// instance's arrivals. Returns true when already done.
  bool start(FlowPort& port, std::uint32_t token, Time now,
             std::map<std::pair<VertexId, VertexId>, Route>& routes);
  /// One of this instance's flows arrived; returns true when the whole collective is done.
  bool on_arrival(FlowPort& port, std::uint32_t token, Time now,
                  std::map<std::pair<VertexId, VertexId>, Route>& routes);
  bool done() const { return done_; }
  Time start_time() const { return start_; }
  Time end_time() const { return end_; }
  const std::vector<VertexId>& ranks() const { return ranks_; }
  const std::vector<CollectiveLinkSlice>& link_slices() const { return slices_; }

 private:
  void start_step(FlowPort& port, std::uint32_t token, Time now,
                  std::map<std::pair<VertexId, VertexId>, Route>& routes);
  const Topology* topology_;
  std::vector<VertexId> ranks_;
  std::vector<CollectiveStep> steps_;
  std::size_t step_ = 0;
  std::int32_t outstanding_ = 0;
  Time start_, end_, step_start_;
  bool done_ = false;
  std::vector<CollectiveLinkSlice> slices_;
  std::vector<LinkId> step_links_;
};

/// Result of a standalone collective on an otherwise idle network.
struct CollectiveTiming {
  Time simulated;
  Time closed_form;
  std::vector<CollectiveLinkSlice> link_slices;
};

/// Runs one collective alone on the topology (its own MaxMinFlows) and computes its closed form.
CollectiveTiming simulate_collective(const Topology& topology, const std::vector<VertexId>& gpus,
                                     CollectiveKind kind, CollectiveAlgorithm algorithm,
                                     double bytes, RingSteps ring = RingSteps::Pipelined);

/// An all-to-all on the otherwise idle topology: every rank sends bytes / n to each other rank at
/// once (one step of n (n - 1) flows sharing links by max-min fairness); flows between GPUs of
/// different nodes carry `cross_node_factor` of that (DeepSeek's node-limited routing sends a
/// token once per node). Returns the time until the last flow arrives.
Time simulate_all_to_all(const Topology& topology, const std::vector<VertexId>& gpus, double bytes,
                         double cross_node_factor = 1.0);

}  // namespace bubblesim
