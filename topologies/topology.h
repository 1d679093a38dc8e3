#pragma once
// Topology: the cluster as a graph. Vertices are GPUs, hosts, PCIe switches, NICs and network
// switches; every physical link is full duplex and appears as two directed links (LinkId), each
// with its own capacity. Routes are computed by shortest path, lazily: one search per source,
// settled only as far as the queries need, resumed by later queries and cached (route_search.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

using VertexId = std::int32_t;
using LinkId = std::int32_t;  // one direction of a physical link

enum class VertexKind { Gpu, Host, PcieSwitch, Nic, Switch };
std::string_view vertex_kind_name(
    VertexKind kind);  // "gpu", "host", "pcie-switch", "nic", "switch"
/// Every kind's name, in VertexKind order (for messages and choices).
const std::vector<std::string>& vertex_kind_names();
/// The kind a name names; nullopt for any other text.
std::optional<VertexKind> vertex_kind_from_name(std::string_view name);

struct Route {
  std::vector<LinkId> links;  // directed links from source to destination, in order
  Time latency;               // sum of the links' latencies
};

class Topology {
 public:
  Topology();
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  Topology(const Topology&);
  Topology& operator=(const Topology&);

  /// Throws std::invalid_argument on a duplicate name.
  VertexId add_vertex(const std::string& name, VertexKind kind);
  /// A full-duplex link: two directed links a->b and b->a with the same bandwidth and latency.
  void add_link(VertexId a, VertexId b, Bandwidth bandwidth, Time latency);

  std::int32_t vertex_count() const;
  std::optional<VertexId> find(const std::string& name) const;
  const std::string& vertex_name(VertexId v) const;
  VertexKind vertex_kind(VertexId v) const;
  /// GPU vertices in the order they were added (the default stage placement order).
  std::vector<VertexId> gpus() const;

  std::int32_t link_count() const;  // directed links
  Bandwidth link_bandwidth(LinkId l) const;
  Time link_latency(LinkId l) const;
  VertexId link_source(LinkId l) const;
  VertexId link_target(LinkId l) const;
  std::string link_name(LinkId l) const;  // "gpu0->nvswitch0"
  /// Directed links from `from` to `to` (parallel links are allowed), in id order.
  std::vector<LinkId> links_between(VertexId from, VertexId to) const;

  /// Multiplies the bandwidth of every link with an endpoint of `kind` by `factor` (0 < factor
  /// <= 1; throws std::invalid_argument otherwise): the NICs' links at the share of their line
  /// rate NCCL reaches (`first_principles.nccl`, docs/first-principles.md).
  void scale_bandwidth(VertexKind kind, double factor);
  /// Pairs a GPU with its own NIC: among equally short routes, the GPU's traffic leaves and enters
  /// through it (NIC affinity, docs/topologies.md). Several GPUs may share one NIC. Throws
  /// std::invalid_argument unless `gpu` is a GPU and `nic` a NIC.
  void set_nic(VertexId gpu, VertexId nic);
  /// The NIC set_nic paired with `gpu`; nullopt when none.
  std::optional<VertexId> nic_of(VertexId gpu) const;
  /// ECMP (on by default, `topology.ecmp`): where a route's equal-cost choices all come from
  /// network switches (the spines of a fat tree), each route takes the one a hash of its
  /// endpoints picks, as switches hash flows over equal-cost ports; off: the lowest vertex id.
  void set_ecmp(bool on);
  bool ecmp() const;

  /// Shortest route from `from` to `to`, minimising the time to move 1 MiB over it alone (sum of
  /// latency + 1MiB/bandwidth per link); ties broken by fewer hops, then by the endpoints' own
  /// NICs (a route through both, else through the source's, else through the destination's),
  /// then ECMP among switches (set_ecmp), then lower vertex ids, so the result is deterministic.
  /// nullopt when unreachable. from == to gives an empty route.
  std::optional<Route> route(VertexId from, VertexId to) const;
  /// The host vertex closest (by route) to a GPU (ties: lower id); nullopt when none is reachable.
  /// route() and nearest_host() fill an internal cache (shared by copies, bounded in memory); they
  /// are safe to call from several threads.
  std::optional<VertexId> nearest_host(VertexId gpu) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubblesim
