#pragma once
// NetworkModel: how data moves during a replay: between devices (a dependency's activation or
// gradient) and between a device and host memory (offload and reload copies). The event loop calls
// this one interface whatever the network; each model is one class in this folder:
//
//   NoCost       the idealized table: data arrives when its producer ends; no transfers reported
//   FixedDelay   every cross-device transfer arrives a constant delay after it leaves
//   FlowNetwork  flows over topology routes sharing links by max-min fairness (MaxMinFlows), plus
//                route latency; link faults; the flows of gradient-sync collectives
//
// A model answers at once when it knows an arrival time when the data leaves; otherwise it keeps
// the caller's token and reports through the NetworkSink later (flows under contention).
// EngineInput's NetworkSpec picks the model (make_network_model).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/simulation_result.h"
#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

class DurationModel;
class FlowPort;
class ShapePort;
struct StageCost;
struct Table;

/// The duration of node n (device-major numbering) on device d, for one replay.
using OpDuration = std::function<Time(std::int32_t device, std::uint32_t node)>;
struct EngineInput;

/// What a network model calls back: the event loop.
class NetworkSink {
 public:
  virtual ~NetworkSink() = default;
  /// on_event(payload, at) of the model is called at `at` (network priority).
  virtual void schedule_network(Time at, std::uint32_t payload) = 0;
  /// The data of a pending send (its token) arrives at `at` >= now.
  virtual void transfer_arrived(std::uint32_t token, Time at, Time now) = 0;
  /// A pending copy (its token) ends at `at`.
  virtual void copy_finished(std::uint32_t token, Time at) = 0;
  /// A token of engine component `owner`'s flow port (flow_port) comes back at `at`.
  virtual void component_token(std::uint8_t owner, std::uint32_t token, Time at) = 0;
};

enum class CopyDirection : std::uint8_t { DeviceToHost, HostToDevice };

/// Host memory: which host each device offloads to, and the hosts' names (for out-of-memory).
struct HostLayout {
  std::vector<std::size_t> host_of_device;
  std::vector<std::string> names;
};

/// A transfer or copy that never finished (a cut link): for the deadlock message.
struct StalledFlow {
  enum class Kind : std::uint8_t { Send, Copy, Component } kind;
  std::uint32_t token;
  double remaining_bytes;
  std::uint8_t owner = 0;  // Component: whose flow port (the component describes it)
};

class NetworkModel {
 public:
  /// `offload_bandwidth`: the private GPU-host link a copy uses when the model has no route for
  /// it (unset: such copies take no time).
  explicit NetworkModel(std::optional<Bandwidth> offload_bandwidth)
      : offload_bandwidth_(offload_bandwidth) {}
  virtual ~NetworkModel() = default;
  NetworkModel(const NetworkModel&) = delete;
  NetworkModel& operator=(const NetworkModel&) = delete;

  /// Before the replay starts: where callbacks go (and timed events such as link faults).
  virtual void begin(NetworkSink& sink) { sink_ = &sink; }
  /// False only for the idealized replay: dependencies arrive when their producer ends and no
  /// transfer is reported to observers.
  virtual bool moves_data() const { return true; }
  /// `bytes` leave device `from` for device `to` at `now`. Returns the arrival time when the model
  /// knows it now; otherwise nullopt, and sink.transfer_arrived(token, ...) follows.
  virtual std::optional<Time> send(std::int32_t from, std::int32_t to, Bytes bytes,
                                   std::uint32_t token, Time now) = 0;
  /// A copy of `bytes` between `device` and its host starts at `now`. Returns its end when known
  /// now; otherwise nullopt, and sink.copy_finished(token, ...) follows. By default a private link
  /// of the offload bandwidth (no contention), or no time without one.
  virtual std::optional<Time> copy(std::int32_t device, CopyDirection direction, Bytes bytes,
                                   std::uint32_t token, Time now);
  /// An event this model scheduled through the sink is due.
  virtual void on_event(std::uint32_t /*payload*/, Time /*now*/) {}
  /// Host memory layout for `devices` devices; by default one shared "host".
  virtual HostLayout hosts(std::int32_t devices) const;
  /// Where engine component `owner` (engine_component.h: a gradient sync, the expert
  /// all-to-all) puts its flows; their tokens come back through sink.component_token(owner, ...).
  /// Null when the model has no links.
  virtual FlowPort* flow_port(std::uint8_t /*owner*/) { return nullptr; }
  /// Where `owner` launches flows laid out once (sim/engine/symmetry/shape_port.h), when this
  /// model solves flows by class; null otherwise (the component adds its flows one by one).
  virtual ShapePort* shape_port(std::uint8_t /*owner*/) { return nullptr; }
  /// After the replay: link usage into the metrics (and per link class when `sync`).
  virtual void report(Metrics& /*metrics*/, bool /*sync*/) const {}
  /// Transfers and copies still in flight, in start order, at most `limit`.
  virtual std::vector<StalledFlow> stalled(std::size_t /*limit*/) const { return {}; }
  /// Whether no two transfers of `graph` can ever compete (share a link at the same time) with
  /// these durations. When it says so, every later send() knows its arrival at once (never
  /// nullopt) and report() stays exact: the engine may then replay by list scheduling
  /// (list_replay.h) instead of the event loop. Decided per table and durations, or
  /// provisionally: then contention_seen() says after the replay whether it held.
  virtual bool contention_free(const Table& /*table*/, const std::vector<StageCost>& /*costs*/,
                               const OpDuration& /*duration*/) {
    return false;
  }
  /// After a list replay: true when two of its transfers met on a link, so its arrivals are
  /// not what the event loop computes (the engine replays with the event loop instead).
  virtual bool contention_seen() { return false; }
  /// The delay of every transfer when it is one constant (FixedDelay), so that a list-scheduling
  /// replay adds it without a call; nullopt otherwise.
  virtual std::optional<Time> fixed_delay() const { return std::nullopt; }

  /// Before each iteration's replay: a duration model that stretches transfer delays and copy
  /// times (DurationModel::jitters_network; docs/variability.md), and the iteration. It must
  /// outlive the model. Without one every delay is as given.
  void set_jitter(const DurationModel* jitter, std::int32_t iteration = 0);
  /// Names the transfer the next send() carries: the producer and consumer nodes (OpIndex
  /// numbering), so that a jittered delay is the same whichever replay sends it. Callers of
  /// send() call it first.
  void label_next_transfer(std::uint32_t producer, std::uint32_t consumer) {
    next_producer_ = producer;
    next_consumer_ = consumer;
  }
  /// Whether transfer delays or copy times are stretched (set_jitter).
  bool jittered() const { return jitter_ != nullptr; }

 protected:
  /// `delay` (a fixed delay or a route latency) of the labelled transfer from `from` to `to`,
  /// stretched by the jitter's factor for it.
  Time transfer_delay(std::int32_t from, std::int32_t to, Time delay) const;
  /// `time` (a copy's private-link time or route latency) of copy `node` on `device`, stretched.
  Time copy_time(std::int32_t device, std::uint32_t node, Time time) const;

  NetworkSink* sink_ = nullptr;
  std::optional<Bandwidth> offload_bandwidth_;

 private:
  const DurationModel* jitter_ = nullptr;
  std::int32_t iteration_ = 0;
  std::uint32_t next_producer_ = 0, next_consumer_ = 0;
};

/// The model EngineInput::network names. Throws std::invalid_argument on an inconsistent input.
std::unique_ptr<NetworkModel> make_network_model(const EngineInput& input);

}  // namespace bubblesim
