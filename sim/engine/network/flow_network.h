#pragma once
// FlowNetwork: the network model over a topology (network_model.h). A transfer between two
// devices is a flow over the route between their GPUs; concurrent flows share every link by
// max-min fairness (MaxMinFlows), and the data arrives the route's latency after the flow's last
// byte. Offload and reload copies are flows over the route between a GPU and its nearest host;
// engine components (gradient-sync collectives, the expert all-to-all) put their flows here too
// (flow_port), so everything contends with everything. Link faults change a link's capacity at
// their time.
//
// Routes between device pairs are computed on first use (only pairs that exchange data need one).
//
// By class (docs/engine.md, "Symmetric flows"): when a component launches collectives over many
// replicas, every flow goes through ClassFlows (sim/engine/symmetry/class_flows.h), which solves
// one representative per class of flows that provably share their max-min rate; a lone transfer
// is a shape of one flow. The result is the one-by-one solution up to floating-point sums.

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/collectives.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/max_min_flows.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/symmetry/class_flows.h"
#include "sim/engine/symmetry/shape_port.h"
#include "sim/engine/symmetry/symmetry_mode.h"
#include "sim/engine/sync_metrics.h"

namespace bubblesim {

class FlowNetwork final : public NetworkModel {
 public:
  /// Throws std::invalid_argument when the topology or a fault does not fit `devices`.
  /// `symmetry`: solve the flows by class (mode "symmetric") or one by one ("full"), and why.
  FlowNetwork(const TopologyNetwork& spec, std::int32_t devices, std::vector<LinkFault> faults,
              std::optional<Bandwidth> offload_bandwidth, FlowSymmetry symmetry = {});

  void begin(NetworkSink& sink) override;
  std::optional<Time> send(std::int32_t from, std::int32_t to, Bytes bytes, std::uint32_t token,
                           Time now) override;
  std::optional<Time> copy(std::int32_t device, CopyDirection direction, Bytes bytes,
                           std::uint32_t token, Time now) override;
  void on_event(std::uint32_t payload, Time now) override;
  HostLayout hosts(std::int32_t /*devices*/) const override { return hosts_; }
  FlowPort* flow_port(std::uint8_t owner) override;
  ShapePort* shape_port(std::uint8_t owner) override;
  void report(Metrics& metrics, bool sync) const override;
  std::vector<StalledFlow> stalled(std::size_t limit) const override;
  /// True when the graph has no copies and the network no faults. Proven when every directed
  /// link carries the transfers of at most one device pair, an op sends at most once per pair,
  /// and on every pair the longest transfer (alone on its route) is shorter than the shortest op
  /// that sends over it: consecutive sends of a pair are at least one such op apart, so they
  /// never overlap. Otherwise provisional: contention_seen() checks the replay's transfers.
  /// From then on send() computes arrivals of lone flows without the solver.
  bool contention_free(const Table& table, const std::vector<StageCost>& costs,
                       const OpDuration& duration) override;
  /// After a provisional contention_free(): whether two transfers were on one link at the same
  /// time (or one started as the other ended). Sorts each link's intervals (16 bytes per
  /// transfer and link, kept only in the provisional case).
  bool contention_seen() override;

 private:
  struct Pending {
    StalledFlow::Kind kind;
    std::uint32_t token;
    Time latency;
    std::uint8_t owner = 0;  // Component: the port's owner
  };
  struct Faults {  // link faults, applied in time order as the replay reaches them
    std::vector<LinkFault> list;
    std::vector<std::size_t> order;  // `list` by time
    std::size_t next = 0;            // into `order`: the first not applied yet
  };
  struct Routes {  // computed on first use; pairs numbered in that order (sparse: 65,536 devices
                   // would make a dense [from][to] table 4 G entries)
    std::unordered_map<std::uint64_t, std::size_t> id;  // from << 32 | to -> index into pair
    std::deque<std::optional<Route>> pair;              // stable references
    std::vector<std::optional<Route>> d2h, h2d;         // per device, to its host and back
  };
  /// Uncontended mode (contention_free said yes): per route its lone-flow rate, per link usage.
  struct Uncontended {
    bool active = false;
    bool checked = false;            // contention_free was provisional: intervals are recorded
    std::vector<double> route_rate;  // [pair id], bytes/s of a lone flow
    std::vector<Time> link_busy;
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> link_intervals;  // per link
    std::vector<std::int64_t> link_bytes;
  };

  /// An engine component's port: its flows share the links like every other flow, its tokens
  /// go back to the sink's component_token. By class it also launches shapes.
  class OwnerPort final : public FlowPort, public ShapePort {
   public:
    OwnerPort(FlowNetwork& network, std::uint8_t owner) : network_(network), owner_(owner) {}
    void add_flow(const std::vector<LinkId>& links, double bytes, Time latency, std::uint32_t token,
                  Time now, double weight) override {
      network_.start_flow(
          links, bytes, Pending{StalledFlow::Kind::Component, token, latency, owner_}, now, weight);
    }
    void add_timer(Time at, std::uint32_t token) override {
      network_.sink_->component_token(owner_, token, at);
    }
    std::int32_t add_shape(const std::vector<ShapeFlow>& flows, std::int32_t members,
                           Time now) override {
      return network_.by_class_.flows->add_shape(flows, members, now);
    }
    void launch(std::int32_t shape, double scale, std::uint32_t first_token, Time now) override {
      network_.launch_shape(
          shape, scale, Pending{StalledFlow::Kind::Component, first_token, Time{}, owner_}, now);
    }

   private:
    FlowNetwork& network_;
    std::uint8_t owner_;
  };

  /// By class: the flows, what each launch hands back, and how the report names the mode.
  struct ByClass {
    std::unique_ptr<ClassFlows> flows;          // null: one by one (flows_)
    std::vector<Pending> pending;               // by launch
    std::vector<ClassFlows::Arrival> arrivals;  // scratch
    FlowSymmetry symmetry;
  };

  void start_flow(const std::vector<LinkId>& links, double bytes, Pending pending, Time now,
                  double weight = 1.0);
  /// By class: launches `shape`; `pending.latency` is added to every class's.
  void launch_shape(std::int32_t shape, double scale, Pending pending, Time now);
  void hand_back(const Pending& p, std::uint32_t member, Time at, Time now);
  const std::optional<Route>& route_between(std::int32_t from, std::int32_t to);
  /// The pair's index into routes_.pair (its route computed on first use).
  std::size_t pair_id(std::int32_t from, std::int32_t to);
  Time lone_transfer(std::size_t pair, const Route& route, Bytes bytes, Time now);
  void schedule_check();
  void apply_faults_until(Time now);
  void on_check(Time now);

  const Topology& topology_;
  std::vector<VertexId> device_vertex_;
  Faults faults_;
  MaxMinFlows flows_;
  std::uint32_t version_ = 0;     // of the pending completion check; older ones are stale
  std::vector<Pending> pending_;  // by flow id
  Routes routes_;
  HostLayout hosts_;
  std::vector<MaxMinFlows::FlowId> finished_;  // scratch
  Uncontended uncontended_;
  std::vector<std::unique_ptr<OwnerPort>> ports_;  // by owner, made on first use
  ByClass by_class_;
};

/// Busy time and bytes per link class ("gpu-switch", ...: the kinds of a link's ends, sorted).
std::vector<LinkClassUsage> link_class_usage(const Topology& topology, const MaxMinFlows& flows);
/// The same from any per-link usage.
std::vector<LinkClassUsage> link_class_usage(const Topology& topology,
                                             const std::function<Time(LinkId)>& busy,
                                             const std::function<double(LinkId)>& bytes);

}  // namespace bubblesim
