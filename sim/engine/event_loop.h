#pragma once
// EventLoop: the discrete-event replay of an OpGraph. Every device stream runs its nodes in table
// order, one at a time, each as soon as its dependencies have arrived; events are keyed by (time,
// priority, sequence) so ties are deterministic. The loop owns only what is about streams and
// dependencies; everything else is a component it calls through a small interface:
//
//   NetworkModel      a cross-device dependency's data, and copy times (network/network_model.h)
//   MemoryAccounting  what an op's start and end allocate and free (memory_accounting.h)
//   GradientSync      the iteration-end collectives and optimizer steps (gradient_sync.h)
//   ExpertExchange    the expert all-to-all of MoE ops as flows (expert_exchange.h)
//   EngineObserver    traces and timelines, which only watch (observer.h)
//
// A new behaviour (a stream that blocks on a send, an iteration boundary, an op made of phases)
// is a new component with its own EventType, called from start() / finish() / dispatch(), not a
// branch on the network or table kind (docs/engine.md).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/expert_exchange.h"
#include "sim/engine/gradient_sync.h"
#include "sim/engine/iteration_plan.h"
#include "sim/engine/memory_accounting.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/observer.h"
#include "sim/engine/op_graph.h"

namespace bubblesim {

/// Per-op outcome of a replay, parallel to the graph's nodes.
struct ReplayTimes {
  OpTimings timings;                  // an op that never ended (deadlock): -1 ps for both
  std::vector<Time> exposed_comm;     // per device: compute idle caused by data in flight, and
                                      // compute held by blocking sends
  std::vector<Time> blocked_send;     // per device: compute held by blocking sends alone
  std::vector<Time> exposed_offload;  // per device: compute idle waiting for a reload
  std::vector<Time> host_gap;         // per device: compute idle in host gaps after p2p calls
  std::uint64_t events = 0;
  std::size_t completed = 0;
};

/// How one replay begins and how sends behave: the defaults replay one iteration from time 0.
struct ReplayStart {
  std::vector<Time> device_start;       // per device: its streams start no earlier; empty = all 0
  std::uint32_t first_transfer_id = 0;  // transfer ids continue across the iterations of a run
  P2pMode p2p = P2pMode::Async;
  Time sync_gap;               // blocking p2p: the host gap after each exchange (0 = none)
  std::int32_t iteration = 0;  // which iteration (0 first): jittered delays differ per iteration
};

class EventLoop final : private NetworkSink {
 public:
  /// Every reference must outlive the loop. `sync` and `exchange` may be null.
  EventLoop(const OpGraph& graph, const std::vector<Time>& durations, NetworkModel& network,
            MemoryAccounting& memory, GradientSync* sync,
            const std::vector<EngineObserver*>& observers, ReplayStart start = {},
            ExpertExchange* exchange = nullptr);

  /// Runs until no event is left (the end of the table, or a deadlock).
  void run();
  ReplayTimes& times() { return times_; }
  /// The blocked streams and what they wait for; call after run() when not every op finished.
  std::string describe_deadlock() const;
  /// The next free transfer id (for the next iteration's loop).
  std::uint32_t next_transfer_id() const { return sends_.next_transfer_id; }

 private:
  struct NodeState {
    Time ready;         // latest arrival of a dependency
    Time local_ready;   // latest end of a producer (arrival without communication)
    Time other_ready;   // latest arrival of a dependency other than a reload (exposed offload)
    Time remote_ready;  // latest arrival of a dependency from another device
    std::int32_t deps_remaining = 0;
    bool remote = false;  // it has a dependency from another device (a receive)
  };
  struct PendingSend {  // a send the network will report later
    std::uint32_t producer, target, id;
    Bytes bytes;
    bool holds = false;  // the producer's stream waits for it (blocking p2p)
  };
  struct Hold {  // a compute stream held after its op by blocking sends (or before its start)
    std::int32_t sends = 0;  // sends still in flight
    Time since, until;       // the op's end; the latest arrival so far
  };
  struct Streams {  // per stream slot (graph_.stream_ops): where it is and whether it runs
    std::vector<std::size_t> cursor;  // its next op
    std::vector<bool> busy;
    std::vector<Time> free_at;
    std::vector<Hold> holds;         // blocking p2p only
    std::vector<bool> sent_last;     // its previous op sent to another device (host gaps only)
    std::vector<bool> gap_pending;   // a HostGap event is queued for it
    std::vector<Time> device_start;  // per device; empty: every device starts at 0
  };
  struct Sends {  // sends in flight, by token (free tokens are reused)
    std::vector<PendingSend> pending;
    std::vector<std::uint32_t> free;
    std::uint32_t next_transfer_id = 0;  // transfer ids continue across iterations
  };

  // NetworkSink
  void schedule_network(Time at, std::uint32_t payload) override;
  void transfer_arrived(std::uint32_t token, Time at, Time now) override;
  void copy_finished(std::uint32_t token, Time at) override;
  void sync_token(std::uint32_t token, Time at) override;
  void exchange_token(std::uint32_t token, Time at) override;

  void dispatch(const Event& event);
  void try_start(std::size_t slot, Time now);
  void start(std::uint32_t n, Time now);
  void finish(std::uint32_t n, Time now);
  void send(std::uint32_t producer, const Edge& edge, Time now);
  void deliver(std::uint32_t target, Time at, Time now, bool counts_for_offload = true);
  /// deliver() of data sent from another device (its arrival ends a p2p call: host gaps).
  void deliver_remote(std::uint32_t target, Time at, Time now);
  void arrive(std::uint32_t target, Time now);
  void release_copies_after(std::uint32_t n, Time now);
  void hold_arrived(std::size_t slot, Time at);
  void release(std::size_t slot, Time now);
  /// With a host gap: whether compute op n, next on `slot`, must still wait for the gap after the
  /// p2p call before it (queueing one HostGap event for when it has passed).
  bool waits_for_host_gap(std::size_t slot, std::uint32_t n, Time now);
  /// The end of the p2p call before compute op n (its receives and the previous op's sends), or
  /// nullopt when none precedes it.
  std::optional<Time> p2p_call_end(std::size_t slot, std::uint32_t n) const;
  void notify_host_gap(std::int32_t device, std::uint32_t n, Time start, Time end) const;
  void notify_transfer(bool end, std::uint32_t id, std::uint32_t producer, std::uint32_t target,
                       Bytes bytes, Time time) const;

  const OpGraph& graph_;
  const std::vector<Time>& durations_;
  NetworkModel& network_;
  MemoryAccounting& memory_;
  GradientSync* sync_;
  ExpertExchange* exchange_;
  const std::vector<EngineObserver*>& observers_;
  const bool moves_data_;

  EventQueue queue_;
  std::vector<NodeState> state_;
  Streams streams_;
  const P2pMode p2p_;
  const Time sync_gap_;
  Sends sends_;
  ReplayTimes times_;
};

}  // namespace bubblesim
