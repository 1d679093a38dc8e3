#pragma once
// EventLoop: the discrete-event replay of an OpGraph. Every device stream runs its nodes in table
// order, one at a time, each as soon as its dependencies have arrived; events are keyed by (time,
// priority, sequence) so ties are deterministic. The loop owns only what is about streams and
// dependencies; everything else is called through an interface:
//
//   NetworkModel      a cross-device dependency's data, and copy times (network/network_model.h)
//   MemoryAccounting  what an op's start and end allocate and free (memory_accounting.h)
//   EngineComponent   each further behaviour (engine_component.h; the built-in ones in
//                     components/): at fixed points of an op's life, and its own events
//   EngineObserver    traces and timelines, which only watch (observer.h)
//
// The loop names no behaviour: a new one is a new component with its registration
// (components/builtin_components.cpp), not a branch here (docs/engine.md).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/engine_component.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/memory_accounting.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/observer.h"
#include "sim/engine/op_graph.h"

namespace bubblesim {

/// Per-op outcome of a replay, parallel to the graph's nodes.
struct ReplayTimes {
  OpTimings timings;                  // an op that never ended (deadlock): -1 ps for both
  std::vector<Time> exposed_comm;     // per device: compute idle caused by data in flight (and
                                      // what components count as such: blocking sends)
  std::vector<Time> exposed_offload;  // per device: compute idle waiting for a reload
  std::uint64_t events = 0;
  std::size_t completed = 0;
};

/// How one replay begins: the defaults replay one iteration from time 0.
struct ReplayStart {
  std::vector<Time> device_start;       // per device: its streams start no earlier; empty = all 0
  std::uint32_t first_transfer_id = 0;  // transfer ids continue across the iterations of a run
  std::int32_t iteration = 0;  // which iteration (0 first): jittered delays differ per iteration
};

class EventLoop final : private NetworkSink, private ComponentHost {
 public:
  /// Every reference must outlive the loop; so must the components, which it attaches and calls
  /// in this order.
  EventLoop(const OpGraph& graph, const std::vector<Time>& durations, NetworkModel& network,
            MemoryAccounting& memory, const std::vector<EngineObserver*>& observers,
            ReplayStart start = {}, std::vector<EngineComponent*> components = {});

  /// Runs until no event is left (the end of the table, or a deadlock).
  void run();
  /// Called every 2^16 events with the simulated time and the events so far (a progress line).
  void report_progress(std::function<void(Time, std::uint64_t)> progress) {
    progress_ = std::move(progress);
  }
  ReplayTimes& times() override { return times_; }
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
  };
  struct Streams {  // per stream slot (graph_.stream_ops): where it is and whether it runs
    std::vector<std::size_t> cursor;  // its next op
    std::vector<bool> busy;
    std::vector<Time> free_at;
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
  void component_token(std::uint8_t owner, std::uint32_t token, Time at) override;

  // ComponentHost
  const OpGraph& graph() const override { return graph_; }
  const std::vector<EngineObserver*>& observers() const override { return observers_; }
  void schedule(std::uint8_t owner, Time at, std::uint32_t payload) override;
  void release(std::size_t slot, Time at) override;
  void try_start(std::size_t slot, Time now) override;
  void finish(std::uint32_t n, Time now) override;
  std::optional<Time> remote_ready(std::uint32_t n) const override;
  Time stream_free_at(std::size_t slot) const override { return streams_.free_at[slot]; }

  void dispatch(const Event& event);
  void start(std::uint32_t n, Time now);
  /// Frees a held stream slot now (a Release event).
  void free_slot(std::size_t slot, Time now);
  void send(std::uint32_t producer, const Edge& edge, Time now);
  /// The data a send carried arrived at `at` (components first, then its consumer).
  void send_arrived(const PendingSend& s, Time at, Time now);
  void deliver(std::uint32_t target, Time at, Time now, bool counts_for_offload = true);
  /// deliver() of data sent from another device.
  void deliver_remote(std::uint32_t target, Time at, Time now);
  void arrive(std::uint32_t target, Time now);
  void release_copies_after(std::uint32_t n, Time now);
  void notify_transfer(bool end, std::uint32_t id, std::uint32_t producer, std::uint32_t target,
                       Bytes bytes, Time time) const;

  const OpGraph& graph_;
  const std::vector<Time>& durations_;
  NetworkModel& network_;
  MemoryAccounting& memory_;
  const std::vector<EngineObserver*>& observers_;
  const std::vector<EngineComponent*> components_;
  const bool moves_data_;

  EventQueue queue_;
  std::vector<NodeState> state_;
  Streams streams_;
  Sends sends_;
  ReplayTimes times_;
  std::function<void(Time, std::uint64_t)> progress_;
};

}  // namespace bubblesim
