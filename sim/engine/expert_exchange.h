#pragma once
// ExpertExchange: the expert all-to-all of each MoE op as flows inside the replay (docs/moe.md,
// "What the all-to-all contends with"), so that it shares links by max-min fairness with the
// pipeline's transfers, the gradient buckets, offload copies and other stages' all-to-alls.
//
// One all-to-all of the EP group is, seen from the simulated GPU (the device's, rank 0 of its
// group), its E - 1 sends and E - 1 receives of bytes / E each (times the cross-node factor
// between nodes). The other GPUs of the group belong to the data-parallel replicas the engine
// does not simulate; as for the gradient sync they are assumed to run in lockstep with replica 0
// (every GPU of the group sends and receives the same), so the flows between two of them, and
// the far ends of this GPU's flows, are left out: by symmetry they load the other GPUs' links as
// this GPU's flows load its own. What is left runs as at most four flows per all-to-all: sends
// inside the node, sends to other nodes, receives from each; each over the links all its routes
// share (the GPU's NVLink port; its PCIe path and NIC), weighted by its number of routes
// (MaxMinFlows' weighted max-min), so that beside it a p2p transfer gets the share it would get
// beside that many separate flows. On an idle network this gives simulate_all_to_all's time
// whenever the group's flows meet only at their ends (a non-blocking switch between the nodes);
// a fabric oversubscribed between the group's nodes would slow the real all-to-all and not this
// one. tests/engine/expert_exchange_test.cpp checks the equality on the multi-node topology.
//
// An op runs its all-to-alls one after another (a layer's dispatch, then its combine; each a
// step whose flows start together and which ends when the last arrives):
//   F, B (unfused)  its compute (its duration less the all-to-all the costs put in it), then
//                   its all-to-alls; the op and its compute stream end when the last arrives.
//   F&B (fused)     two phases: B's compute under F's all-to-all, then F's compute under B's
//                   (DualPipe's overlapped chunks). While a phase's all-to-all runs, its
//                   compute runs at 1 - sm_share of its speed; the phase ends when both are
//                   done: max(A, C + sm_share x A) for an all-to-all that took A
//                   (overlap_a2a), today's formula when A is the idle time.
// R (recompute) keeps its all-to-all inside its duration.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "schedules/stage_costs.h"
#include "sim/engine/collectives.h"
#include "sim/engine/observer.h"
#include "sim/engine/op_graph.h"
#include "topologies/topology.h"

namespace bubblesim {

/// What the engine needs to run the all-to-alls as flows. Filled by the scenario runner.
struct A2aPlan {
  /// groups[device]: the GPUs of the EP group of the device's GPU, [0] the device's own.
  std::vector<std::vector<VertexId>> groups;
  /// Per device: the share of its bytes a flow between GPUs of different nodes carries
  /// (moe.max_nodes sends a token once per node); empty = 1.
  std::vector<double> cross_node_factor;
  struct Stage {
    double bytes = 0;  // one all-to-all: what each GPU dispatches (its own share included)
    std::int32_t forward = 0, backward = 0;  // all-to-alls in one F and in one B
  };
  std::vector<Stage> stages;  // per table stage
};

/// Per device, what the replay's all-to-alls took (the report's simulation.a2a_*).
struct A2aReplayed {
  std::vector<Time> total, exposed, slowdown;
};

class ExpertExchange {
 public:
  /// Tokens with this bit are timers (a compute phase's end), the others flow arrivals.
  static constexpr std::uint32_t kTimerBit = 0x80000000u;

  /// Every reference must outlive the exchange.
  ExpertExchange(const A2aPlan& plan, const OpGraph& graph, const Topology& topology,
                 FlowPort& port, const std::vector<EngineObserver*>& observers);
  ~ExpertExchange();
  ExpertExchange(const ExpertExchange&) = delete;
  ExpertExchange& operator=(const ExpertExchange&) = delete;

  /// Compute op n starts at `now` with duration `duration` (all-to-all included as the costs
  /// say). Returns nullopt when it has no all-to-all to run (the caller ends it after
  /// `duration`); otherwise the exchange runs it, on_token() reports its end, and the result is
  /// the end of its compute as far as known now (an F&B op's: its end on an idle network).
  std::optional<Time> start(std::uint32_t n, Time now, Time duration);
  /// A token handed to the port came back: the op that ended then, or -1.
  std::int64_t on_token(std::uint32_t token, Time now);
  /// Per device, what the all-to-alls took (after the replay).
  const A2aReplayed& replayed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubblesim
