#pragma once
// EngineComponent: one behaviour of the event-loop replay (a gradient sync, the expert all-to-all,
// blocking sends, host gaps) behind one interface, so that the loop (event_loop.h) names none of
// them. The loop calls every component at a few fixed points of an op's life (may it start, how
// it runs, what holds its stream after it, what its sends' arrivals release) and routes each of
// a component's events back to it: those it schedules itself (ComponentHost::schedule) and the
// tokens of its flows on the network (NetworkModel::flow_port, one generic port per component).
//
// A behaviour is registered as a ComponentKind (component_kind.h): its settings, when an input
// engages it, which shortcuts of the replay it permits (FastPath), how to build it for one
// event-loop replay, and what it reports. The checks that pick a shortcut (the list replay, a
// later iteration as a shifted copy, the streamed replay) are one loop over the kinds
// (refusing_component), so a new behaviour states its own answer and no check learns about it.
// docs/engine.md, "Components".

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/component_kind.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/observer.h"
#include "sim/engine/op_graph.h"
#include "sim/engine/simulation_result.h"
#include "sim/units/time.h"

namespace bubblesim {

class NetworkModel;
struct ReplayTimes;

/// What a component may ask of the event loop (the loop implements it).
class ComponentHost {
 public:
  virtual ~ComponentHost() = default;
  virtual const OpGraph& graph() const = 0;
  virtual const std::vector<EngineObserver*>& observers() const = 0;
  /// Per-device sums the loop reports (exposed communication, ...).
  virtual ReplayTimes& times() = 0;
  /// The calling component's on_event(payload, at) runs at `at`, at its event_priority().
  virtual void schedule(std::uint8_t owner, Time at, std::uint32_t payload) = 0;
  /// A stream slot that a component held past its op's end (holds_stream) is free at `at`.
  virtual void release(std::size_t slot, Time at) = 0;
  /// The next op of `slot` may start now if nothing else keeps it (after admits() said no).
  virtual void try_start(std::size_t slot, Time now) = 0;
  /// Op n, whose end the component took over (run()), ends now.
  virtual void finish(std::uint32_t n, Time now) = 0;
  /// When node n's data from other devices has arrived so far (the latest arrival, or its
  /// producer's end while in flight); nullopt when no input of n comes from another device.
  virtual std::optional<Time> remote_ready(std::uint32_t n) const = 0;
  /// When the stream slot's previous op ended (its stream became free).
  virtual Time stream_free_at(std::size_t slot) const = 0;
};

/// One behaviour of the replay. Every hook has a default that does nothing, so a component
/// overrides only what it changes. Compute hooks are called for compute ops (stream 0) only.
class EngineComponent {
 public:
  virtual ~EngineComponent() = default;

  /// Called by the loop before the replay: where the component's calls go, and its index there
  /// (the owner of its events and of its network port's tokens).
  void attach(ComponentHost& host, std::uint8_t id) {
    host_ = &host;
    id_ = id;
  }
  /// At equal time, where this component's events fall (event_queue.h priorities).
  virtual std::uint8_t event_priority() const { return kPriorityEnd; }
  /// One of its events (schedule(), or a token of its flows) is due.
  virtual void on_event(std::uint32_t /*payload*/, Time /*now*/) {}
  /// Whether compute op n, next on `slot` with every input in, may start now. False: the
  /// component calls host().try_start(slot, t) once it may.
  virtual bool admits(std::size_t /*slot*/, std::uint32_t /*n*/, Time /*now*/) { return true; }
  /// Compute op n starts now: the idle time just before it that this component caused (it is
  /// not waiting for data, so exposed communication leaves it out).
  virtual Time idle_before(std::size_t /*slot*/, std::uint32_t /*n*/, Time /*now*/) {
    return Time::zero();
  }
  /// Compute op n starts now with `duration`. nullopt: the loop ends it after `duration`.
  /// Otherwise the component ends it (host().finish) and the value is its compute's end as far
  /// as known now. The first component that answers runs the op.
  virtual std::optional<Time> run(std::uint32_t /*n*/, Time /*now*/, Time /*duration*/) {
    return std::nullopt;
  }
  /// Compute op n runs from `start` to `end` (as far as known).
  virtual void on_compute_start(std::uint32_t /*n*/, Time /*start*/, Time /*end*/) {}
  /// Compute op n ended now: true when its stream stays busy until the component releases it
  /// (host().release).
  virtual bool holds_stream(std::uint32_t /*n*/, Time /*now*/) { return false; }
  /// Compute op n ended now (after its memory was released).
  virtual void on_compute_end(std::uint32_t /*n*/, Time /*now*/) {}
  /// A transfer sent by node `producer` arrived at `at`.
  virtual void on_send_arrived(std::uint32_t /*producer*/, Time /*at*/) {}
  /// For a deadlock message: one of its flows stalled with this much left.
  virtual std::string describe_stalled(double remaining_bytes) const;
  /// After the replay: what it measured, into the metrics (its own record goes into
  /// metrics.components). `completed`: no deadlock.
  virtual void report(Metrics& /*metrics*/, bool /*completed*/) {}
  /// After report(): per device, when the iteration's end may begin (default: after its last op).
  virtual void iteration_ready(const Metrics& /*metrics*/, std::vector<Time>& /*ready*/) const {}
  /// Whether the network reports its link usage per link class too (NetworkModel::report).
  virtual bool reports_link_classes() const { return false; }

 protected:
  ComponentHost& host() const { return *host_; }
  std::uint8_t id() const { return id_; }

 private:
  ComponentHost* host_ = nullptr;
  std::uint8_t id_ = 0;
};

/// What a component is built from for one event-loop replay.
struct ComponentSetup {
  const EngineInput& in;
  const OpGraph& graph;
  NetworkModel& network;
  const std::vector<EngineObserver*>& observers;
  std::uint8_t id = 0;  // its index in the loop (its events' and flow port's owner)
};

/// The components `in` engages (components_of(in)), built for one event-loop replay, in their
/// registration order.
std::vector<std::unique_ptr<EngineComponent>> make_components(
    const EngineInput& in, const OpGraph& graph, NetworkModel& network,
    const std::vector<EngineObserver*>& observers);

}  // namespace bubblesim
