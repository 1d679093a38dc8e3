#pragma once
// Collectives as point-to-point flows (docs/parallelism.md).
//
// A collective over n ranks is decomposed into steps; every transfer of a step is a flow over the
// route between its two endpoints, and a step starts when every transfer of the previous step has
// arrived (its last byte plus the route latency). Flows share links by max-min fairness with
// everything else on the network, so collectives contend with pipeline traffic and offload.
// collective_layout.h lays out each algorithm (ring in one channel per NIC, NCCL's double binary
// tree, NVLS, NVLS Tree, PAT, bubblesim's hierarchical); collective_plan.h picks the algorithm
// (the scenario's, or NCCL's by its tuning model) and its timing.
//
//   ring all-reduce       2(n-1) steps; in each, rank i sends S/n bytes to rank i+1 (mod n)
//                         (n-1 reduce-scatter steps, then n-1 all-gather steps), in C channels
//   ring reduce-scatter   the first n-1 of those steps; ring all-gather: the last n-1
//   tree all-reduce       NCCL's double binary tree, pipelined: every edge carries S/C up and
//                         down at once (one step)
//   hierarchical          ring reduce-scatter inside every node (concurrently), ring all-reduce
//                         of the S/L shard among the ranks with the same local index across
//                         nodes, ring all-gather inside every node (L ranks per node; nodes
//                         must hold equally many ranks, else it falls back to ring)
// Alpha-beta closed forms (alpha = route latency, B = bottleneck bandwidth of a step's route, N
// nodes of L ranks, C channels; between nodes B is C B_inter, at most B_intra):
//   ring all-reduce       2(n-1) (S/(nB) + alpha)
//   ring RS / AG          (n-1) (S/(nB) + alpha)
//   tree all-reduce       2S/B + 2(L - 1 + ceil(log2 N)) alpha
//   nvls all-reduce       S (L+1)/(L B_intra) + 2 alpha (RS, AG: S / B_intra + 2 alpha)
//   hierarchical          2(L-1)(S/(L B_in) + a_in) + 2(N-1)(S/(L N B_out) + a_out)

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/collective_algorithm.h"
#include "topologies/topology.h"

namespace bubblesim {

struct CollectiveTransfer {
  std::int32_t from = 0;  // rank
  std::int32_t to = 0;
  double bytes = 0.0;
  /// Route latencies paid after the last byte: more than one when the transfer stands for that
  /// many pipelined ring steps (RingSteps::Pipelined); 0 when NCCL's latency is paid instead.
  std::int32_t latencies = 1;
};
using CollectiveStep = std::vector<CollectiveTransfer>;

/// Most flows one collective may simulate (a stepped ring over n ranks in several channels is
/// 2(n - 1) steps of 2n flows: about 2048 ranks, about 2900 in one channel; an all-to-all is
/// n(n - 1) flows: 4096 ranks). The layouts and simulate_all_to_all refuse more with an
/// InputError naming this limit.
inline constexpr std::int64_t kMaxCollectiveFlows = std::int64_t{1} << 24;

/// The steps of a collective of `bytes` (S, the full buffer per rank) over `node_of_rank.size()`
/// ranks in one channel; node_of_rank groups ranks by node. One rank: no steps.
std::vector<CollectiveStep> collective_steps(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                             double bytes,
                                             const std::vector<std::int32_t>& node_of_rank,
                                             RingSteps ring = RingSteps::Pipelined);

/// Link parameters of the closed form: inside a node and between nodes (equal when flat).
struct AlphaBeta {
  Bandwidth intra, inter;
  Time alpha_intra, alpha_inter;
};

/// The alpha-beta closed form above over `channels` (C). Hierarchical with N = 1 or L = 1
/// reduces to ring, as do nvls and tree where they do not run (reduce-scatter, all-gather).
Time collective_closed_form(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                            std::int32_t ranks, std::int32_t nodes, const AlphaBeta& link,
                            std::int32_t channels = 1);

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

/// NCCL's time for one collective (first_principles.nccl_tuning): its flows move the bytes at the
/// links' rates, shared with everything else, but no faster than NCCL's algorithm bandwidth
/// (`floor`: the bytes over it), and NCCL's latency follows the last byte. The collective ends at
/// max(last byte, start + floor) + latency.
struct ModelTiming {
  Time floor;
  Time latency;
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
  /// `ranks`: the endpoints the steps' transfers index (the ranks, then any switch).
  CollectiveInstance(const Topology& topology, std::vector<VertexId> ranks,
                     std::vector<CollectiveStep> steps,
                     std::optional<ModelTiming> timing = std::nullopt);
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
  std::optional<ModelTiming> timing_;
  std::size_t step_ = 0;
  std::int32_t outstanding_ = 0;
  Time start_, end_, step_start_;
  bool done_ = false;
  bool in_latency_ = false;  // timing_: the bytes have arrived, NCCL's latency runs
  std::vector<CollectiveLinkSlice> slices_;
  std::vector<LinkId> step_links_;
};

/// Result of a standalone collective on an otherwise idle network.
struct CollectiveTiming {
  Time simulated;
  Time closed_form;
  /// What ran, as reports name it ("ring", "tree/LL128": collective_plan.h's plan_name); empty
  /// where no planner chose it.
  std::string algorithm;
  std::vector<CollectiveLinkSlice> link_slices;
};

/// Runs one collective alone on the topology (its own MaxMinFlows) and computes its closed form,
/// in one channel with the topology's latencies (collective_plan.h has the channels and NCCL).
CollectiveTiming simulate_collective(const Topology& topology, const std::vector<VertexId>& gpus,
                                     CollectiveKind kind, CollectiveAlgorithm algorithm,
                                     double bytes, RingSteps ring = RingSteps::Pipelined);

/// Runs `c` alone on an idle network of `topology` from time 0 until its last flow arrives.
void run_alone(CollectiveInstance& c, const Topology& topology);

/// An all-to-all on the otherwise idle topology: every rank sends bytes / n to each other rank at
/// once (one step of n (n - 1) flows sharing links by max-min fairness); flows between GPUs of
/// different nodes carry `cross_node_factor` of that (DeepSeek's node-limited routing sends a
/// token once per node). Returns the time until the last flow arrives.
Time simulate_all_to_all(const Topology& topology, const std::vector<VertexId>& gpus, double bytes,
                         double cross_node_factor = 1.0);

}  // namespace bubblesim
