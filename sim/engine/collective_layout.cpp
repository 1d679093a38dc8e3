#include "sim/engine/collective_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sim/units/diagnostics.h"

namespace bubblesim {
std::int32_t ceil_log2(std::int32_t n) {
  std::int32_t k = 0;
  while ((std::int32_t{1} << k) < n) ++k;
  return k;
}

namespace {

void check_flow_limit(std::int64_t flows, std::size_t ranks, std::int32_t count) {
  if (flows <= kMaxCollectiveFlows) return;
  throw InputError(fmt::format(
      "a ring collective over {} ranks is {} steps of {} flows each ({} flows), more than the "
      "limit of {} (kMaxCollectiveFlows in sim/engine/collectives.h: raise it there and rebuild, "
      "or use fewer ranks, data_parallel.ring_steps: pipelined or data_parallel.algorithm: tree)",
      ranks, count, flows / std::max(count, 1), flows, kMaxCollectiveFlows));
}

// Ring steps over `members` (ranks in ring order): `count` steps starting at step `offset`; in
// each, member i sends `chunk` bytes to member i+1. Pipelined: one step standing for all of them.
void plain_ring(const std::vector<std::int32_t>& members, double chunk, std::int32_t count,
                std::vector<CollectiveStep>& out, std::size_t offset, RingSteps mode) {
  const auto n = members.size();
  const bool pipelined = mode == RingSteps::Pipelined;
  const std::int32_t steps = pipelined ? 1 : count;
  if (count <= 0) return;
  if (!pipelined) check_flow_limit(static_cast<std::int64_t>(n) * count, n, count);
  if (out.size() < offset + static_cast<std::size_t>(steps))
    out.resize(offset + static_cast<std::size_t>(steps));
  for (std::int32_t k = 0; k < steps; ++k) {
    for (std::size_t i = 0; i < n; ++i)
      out[offset + static_cast<std::size_t>(k)].push_back(
          CollectiveTransfer{members[i], members[(i + 1) % n], pipelined ? chunk * count : chunk,
                             pipelined ? count : 1});
  }
}

/// The channels' ring (collective_layout.h): per step, each cycle edge of a node carries
/// (C - cut) / C of the chunk and each cut 1 / C of it to the next node's next GPU.
void channel_ring(const NodeGroups& g, double chunk, std::int32_t count, RingSteps mode,
                  std::vector<CollectiveStep>& out) {
  const auto nodes = g.members.size();
  const auto local = g.members.front().size();
  const double c = g.channels();
  std::vector<char> cut(local, 0);
  for (std::int32_t j : g.cuts) cut[static_cast<std::size_t>(j)] = 1;
  const bool pipelined = mode == RingSteps::Pipelined;
  const std::int32_t steps = pipelined ? 1 : count;
  const double bytes = pipelined ? chunk * count : chunk;
  const std::int32_t latencies = pipelined ? count : 1;
  const std::size_t per_step = nodes * (local + g.cuts.size());
  if (!pipelined)
    check_flow_limit(static_cast<std::int64_t>(per_step) * count, nodes * local, count);
  out.resize(static_cast<std::size_t>(steps));
  for (CollectiveStep& step : out) {
    step.reserve(per_step);
    for (std::size_t k = 0; k < nodes; ++k) {
      const auto& m = g.members[k];
      const auto& next = g.members[(k + 1) % nodes];
      for (std::size_t j = 0; j < local; ++j) {
        const double share = (c - cut[j]) / c;
        if (share > 0 && local > 1)
          step.push_back({m[j], m[(j + 1) % local], bytes * share, latencies});
        if (cut[j]) step.push_back({m[j], next[(j + 1) % local], bytes / c, latencies});
      }
    }
  }
}

/// src/graph/trees.cc ncclGetBtree: the parent of `rank` in the binary tree over `n` (-1: root).
std::int32_t btree_parent(std::int32_t n, std::int32_t rank) {
  if (rank == 0) return -1;
  std::int32_t bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  std::int32_t up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

/// ncclGetDtree: tree 0 is the binary tree, tree 1 its mirror (n even) or shift by one (n odd).
std::int32_t dtree_parent(std::int32_t n, std::int32_t tree, std::int32_t rank) {
  if (tree == 0) return btree_parent(n, rank);
  if (n % 2 == 1) {
    const std::int32_t u = btree_parent(n, (rank - 1 + n) % n);
    return u == -1 ? -1 : (u + 1) % n;
  }
  const std::int32_t u = btree_parent(n, n - 1 - rank);
  return u == -1 ? -1 : n - 1 - u;
}

/// Both binary trees over the nodes, between the nodes' `heads` (local positions), each head
/// carrying `bytes` of which each tree takes half, up and back down.
void tree_between_nodes(const NodeGroups& g, const std::vector<std::int32_t>& heads, double bytes,
                        std::int32_t latencies, CollectiveStep& step) {
  const auto nodes = static_cast<std::int32_t>(g.members.size());
  for (std::int32_t t = 0; t < 2; ++t) {
    for (std::int32_t k = 0; k < nodes; ++k) {
      const std::int32_t p = dtree_parent(nodes, t, k);
      if (p < 0) continue;
      for (std::int32_t h : heads) {
        const std::int32_t child =
            g.members[static_cast<std::size_t>(k)][static_cast<std::size_t>(h)];
        const std::int32_t parent =
            g.members[static_cast<std::size_t>(p)][static_cast<std::size_t>(h)];
        step.push_back({child, parent, bytes / 2, latencies});
        step.push_back({parent, child, bytes / 2, latencies});
      }
    }
  }
}

/// Inside every node, the channels' chains (the cycle less each cut, head after the cut), each
/// channel's S / C up and down every edge at once; one node: a single chain from local 0.
void node_chains(const NodeGroups& g, double bytes, std::int32_t latencies, CollectiveStep& step) {
  const auto local = g.members.front().size();
  const double c = g.channels();
  std::vector<char> cut(local, 0);
  for (std::int32_t j : g.cuts) cut[static_cast<std::size_t>(j)] = 1;
  const bool one_node = g.members.size() == 1;
  for (const auto& m : g.members) {
    for (std::size_t j = 0; j < local && local > 1; ++j) {
      const double share = one_node ? (j + 1 < local ? 1.0 : 0.0) : (c - cut[j]) / c;
      if (share <= 0) continue;
      step.push_back({m[(j + 1) % local], m[j], bytes * share, latencies});
      step.push_back({m[j], m[(j + 1) % local], bytes * share, latencies});
    }
  }
}

/// The local positions of the channels' heads: the GPU after each cut.
std::vector<std::int32_t> heads_of(const NodeGroups& g) {
  std::vector<std::int32_t> heads;
  const auto local = static_cast<std::int32_t>(g.members.front().size());
  for (std::int32_t j : g.cuts) heads.push_back((j + 1) % local);
  return heads;
}

/// Each node's `heads` send `bytes` to their SHARP switch (endpoint `sharp[rank]`), which
/// reduces across the nodes, and get as much back.
void to_sharp(const NodeGroups& g, const std::vector<std::int32_t>& heads,
              const std::vector<std::int32_t>& sharp, double bytes, std::int32_t latencies,
              CollectiveStep& step) {
  for (const auto& m : g.members) {
    for (std::int32_t h : heads) {
      const std::int32_t r = m[static_cast<std::size_t>(h)];
      const std::int32_t sw = sharp[static_cast<std::size_t>(r)];
      step.push_back({r, sw, bytes, latencies});
      step.push_back({sw, r, bytes, latencies});
    }
  }
}

/// The double binary trees between the nodes' `heads` as each head's traffic into and out of the
/// network (collective_layout.h): a head sends and receives `bytes` / 2 per tree edge it has, up
/// to its parent and down to each child, through its first switch (endpoint `uplink[rank]`).
void tree_through_switches(const NodeGroups& g, const std::vector<std::int32_t>& heads,
                           const std::vector<std::int32_t>& uplink, double bytes,
                           std::int32_t latencies, CollectiveStep& step) {
  const auto nodes = static_cast<std::int32_t>(g.members.size());
  std::vector<std::int32_t> edges(static_cast<std::size_t>(nodes), 0);
  for (std::int32_t t = 0; t < 2; ++t) {
    for (std::int32_t k = 0; k < nodes; ++k) {
      const std::int32_t p = dtree_parent(nodes, t, k);
      if (p < 0) continue;
      ++edges[static_cast<std::size_t>(k)];
      ++edges[static_cast<std::size_t>(p)];
    }
  }
  for (std::int32_t k = 0; k < nodes; ++k) {
    for (std::int32_t h : heads) {
      const std::int32_t r = g.members[static_cast<std::size_t>(k)][static_cast<std::size_t>(h)];
      const std::int32_t sw = uplink[static_cast<std::size_t>(r)];
      const double carried = edges[static_cast<std::size_t>(k)] * bytes / 2;
      step.push_back({r, sw, carried, latencies});
      step.push_back({sw, r, carried, latencies});
    }
  }
}

/// Between the nodes' `heads`: through their switches when every rank has one, else edge by edge.
void between_nodes(const NodeGroups& g, const std::vector<std::int32_t>& heads,
                   const std::vector<std::int32_t>* uplink, double bytes, std::int32_t latencies,
                   CollectiveStep& step) {
  if (uplink)
    tree_through_switches(g, heads, *uplink, bytes, latencies, step);
  else
    tree_between_nodes(g, heads, bytes, latencies, step);
}

CollectiveStep double_binary_tree(const NodeGroups& g, double bytes,
                                  const std::vector<std::int32_t>* uplink, bool route_latency) {
  const auto local = static_cast<std::int32_t>(g.members.front().size());
  const auto nodes = static_cast<std::int32_t>(g.members.size());
  const std::int32_t latencies = route_latency ? 2 * (local - 1 + ceil_log2(nodes)) : 0;
  CollectiveStep step;
  node_chains(g, bytes, latencies, step);
  if (nodes > 1) between_nodes(g, heads_of(g), uplink, bytes / g.channels(), latencies, step);
  return step;
}

/// CollNet: the channels' chains inside the nodes, their heads through the SHARP switch.
CollectiveStep collnet(const NodeGroups& g, double bytes, const std::vector<std::int32_t>& sharp,
                       bool route_latency) {
  const auto local = static_cast<std::int32_t>(g.members.front().size());
  const std::int32_t latencies = route_latency ? 2 * local : 0;
  CollectiveStep step;
  node_chains(g, bytes, latencies, step);
  to_sharp(g, heads_of(g), sharp, bytes / g.channels(), latencies, step);
  return step;
}

/// NVLink SHARP: every rank's buffer to its node's NVSwitch (endpoint n + node) and the result
/// back. With heads (across nodes) the heads also carry their 1/H slice once more each way and
/// either run the double binary trees between nodes (NVLS Tree) or go through the SHARP switch
/// (NVLS with CollNet, `sharp`).
CollectiveStep nvls(CollectiveKind kind, const NodeGroups& g, double bytes, std::int32_t ranks,
                    bool tree, const std::vector<std::int32_t>* sharp,
                    const std::vector<std::int32_t>* uplink, bool route_latency) {
  const auto local = static_cast<double>(g.members.front().size());
  const auto nodes = static_cast<std::int32_t>(g.members.size());
  const std::int32_t latencies =
      route_latency ? 2 + (tree ? 2 * ceil_log2(nodes) : (sharp ? 2 : 0)) : 0;
  std::vector<std::int32_t> heads;
  if (tree || sharp) heads = heads_of(g);
  const bool with_heads = !heads.empty();
  const double h = static_cast<double>(heads.size());
  CollectiveStep step;
  for (std::size_t k = 0; k < g.members.size(); ++k) {
    const std::int32_t sw = ranks + static_cast<std::int32_t>(k);
    for (std::size_t j = 0; j < g.members[k].size(); ++j) {
      double up = bytes, down = bytes;
      if (!with_heads && kind == CollectiveKind::AllReduce) up = down = bytes * (local + 1) / local;
      if (!with_heads && kind == CollectiveKind::ReduceScatter) down = bytes / local;
      if (!with_heads && kind == CollectiveKind::AllGather) up = bytes / local;
      if (with_heads && std::count(heads.begin(), heads.end(), static_cast<std::int32_t>(j)) > 0) {
        up += bytes / h;
        down += bytes / h;
      }
      step.push_back({g.members[k][j], sw, up, latencies});
      step.push_back({sw, g.members[k][j], down, latencies});
    }
  }
  if (tree) between_nodes(g, heads, uplink, bytes / h, latencies, step);
  if (sharp) to_sharp(g, heads, *sharp, bytes / h, latencies, step);
  return step;
}

/// bubblesim's hierarchical all-reduce: ring reduce-scatter inside every node, a ring all-reduce
/// of each S/L shard across nodes (one ring per local index), ring all-gather inside every node.
void hierarchical(const NodeGroups& g, double bytes, RingSteps mode,
                  std::vector<CollectiveStep>& steps) {
  const auto nodes = static_cast<std::int32_t>(g.members.size());
  const auto local = static_cast<std::int32_t>(g.members.front().size());
  for (const auto& m : g.members) plain_ring(m, bytes / local, local - 1, steps, 0, mode);
  const std::size_t inter = steps.size();
  for (std::int32_t l = 0; l < local; ++l) {
    std::vector<std::int32_t> order;
    for (const auto& m : g.members) order.push_back(m[static_cast<std::size_t>(l)]);
    plain_ring(order, bytes / local / nodes, 2 * (nodes - 1), steps, inter, mode);
  }
  const std::size_t gather = steps.size();
  for (const auto& m : g.members) plain_ring(m, bytes / local, local - 1, steps, gather, mode);
}

/// Each rank's switch of `switches` (RankPlaces::uplink or ::sharp) as an endpoint index, the
/// switches appended to `endpoints` once each.
std::vector<std::int32_t> switch_endpoints(const RankPlaces& places,
                                           const std::vector<VertexId>& switches,
                                           std::vector<VertexId>& endpoints) {
  std::vector<std::int32_t> out;
  for (VertexId sw : switches) {
    auto it = std::find(endpoints.begin() + static_cast<std::ptrdiff_t>(places.ranks.size()),
                        endpoints.end(), sw);
    if (it == endpoints.end()) it = endpoints.insert(endpoints.end(), sw);
    out.push_back(static_cast<std::int32_t>(it - endpoints.begin()));
  }
  return out;
}

}  // namespace

RankPlaces rank_places(const Topology& topology, const std::vector<VertexId>& ranks) {
  RankPlaces p;
  p.ranks = ranks;
  p.node = node_of_gpus(topology, ranks);
  const std::size_t n = ranks.size();
  std::map<std::int32_t, std::vector<std::size_t>> by_node;
  for (std::size_t i = 0; i < n; ++i) by_node[p.node[i]].push_back(i);
  // A rank of another node than rank 0's, for every rank on rank 0's node.
  std::size_t away = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (p.node[i] != p.node[0]) away = i;
  p.uplink.assign(n, -1);
  p.sharp.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<VertexId> nic = topology.nic_of(ranks[i]);
    p.nic.push_back(nic ? *nic : -1);
    // The NVSwitch is the middle of the route to another rank of the same node, when that route
    // is GPU -> switch -> GPU.
    VertexId sw = -1;
    const std::vector<std::size_t>& mates = by_node[p.node[i]];
    if (mates.size() > 1) {
      const std::size_t j = mates[0] == i ? mates[1] : mates[0];
      const std::optional<Route> r = topology.route(ranks[i], ranks[j]);
      if (r && r->links.size() == 2) {
        const VertexId mid = topology.link_target(r->links.front());
        if (topology.vertex_kind(mid) == VertexKind::Switch) sw = mid;
      }
    }
    p.nvswitch.push_back(sw);
    // On the route to a rank of another node: the first switch past a NIC (the uplink) and the
    // first switch that reduces in the network.
    if (by_node.size() < 2) continue;
    const std::size_t other = p.node[i] == p.node[0] ? away : 0;
    const std::optional<Route> r = topology.route(ranks[i], ranks[other]);
    if (!r) continue;
    for (LinkId l : r->links) {
      const VertexId v = topology.link_target(l);
      if (topology.vertex_kind(v) != VertexKind::Switch) continue;
      if (p.uplink[i] < 0 && topology.vertex_kind(topology.link_source(l)) == VertexKind::Nic)
        p.uplink[i] = v;
      if (topology.sharp(v)) {
        p.sharp[i] = v;
        break;
      }
    }
  }
  return p;
}

NodeGroups node_groups(const RankPlaces& places, CollectiveChannels channels) {
  NodeGroups g;
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < places.node.size(); ++i) {
    auto it = std::find(ids.begin(), ids.end(), places.node[i]);
    if (it == ids.end()) {
      ids.push_back(places.node[i]);
      g.members.emplace_back();
      it = ids.end() - 1;
    }
    g.members[static_cast<std::size_t>(it - ids.begin())].push_back(static_cast<std::int32_t>(i));
  }
  if (g.members.empty()) return g;
  const std::size_t local = g.members.front().size();
  g.regular = std::all_of(g.members.begin(), g.members.end(),
                          [&](const auto& m) { return m.size() == local; });
  if (g.regular && g.members.size() > 1 && channels == CollectiveChannels::Nics) {
    const auto& m = g.members.front();
    for (std::size_t j = 0; j < local; ++j) {
      const VertexId a = places.nic[static_cast<std::size_t>(m[j])];
      const VertexId b = places.nic[static_cast<std::size_t>(m[(j + 1) % local])];
      if (a != b) g.cuts.push_back(static_cast<std::int32_t>(j));
    }
  }
  if (g.cuts.empty()) g.cuts.push_back(static_cast<std::int32_t>(local) - 1);
  return g;
}

CollectiveLayout lay_out(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                         const RankPlaces& places, const NodeGroups& groups, RingSteps ring,
                         bool route_latency) {
  CollectiveLayout out;
  out.endpoints = places.ranks;
  const auto n = static_cast<std::int32_t>(places.ranks.size());
  if (n <= 1) return out;
  const auto nodes = static_cast<std::int32_t>(groups.members.size());
  const std::int32_t local =
      groups.regular ? static_cast<std::int32_t>(groups.members[0].size()) : 0;
  const bool all_reduce = kind == CollectiveKind::AllReduce;
  const bool switches =
      groups.regular && std::all_of(places.nvswitch.begin(), places.nvswitch.end(),
                                    [](VertexId v) { return v >= 0; });
  const bool uplinks =
      nodes > 1 && groups.regular &&
      std::all_of(places.uplink.begin(), places.uplink.end(), [](VertexId v) { return v >= 0; });
  if (algorithm == CollectiveAlgorithm::Tree && all_reduce && groups.regular) {
    std::vector<std::int32_t> through;
    if (uplinks) through = switch_endpoints(places, places.uplink, out.endpoints);
    out.steps.push_back(
        double_binary_tree(groups, bytes, uplinks ? &through : nullptr, route_latency));
    out.algorithm = algorithm;
    out.channels = groups.channels();
    return out;
  }
  // Across nodes through SHARP switches (CollNet, and NVLS with CollNet): every rank's.
  const bool sharp =
      nodes > 1 && groups.regular &&
      std::all_of(places.sharp.begin(), places.sharp.end(), [](VertexId v) { return v >= 0; });
  const bool nvls_here =
      algorithm == CollectiveAlgorithm::Nvls && local > 1 && (nodes == 1 || (sharp && all_reduce));
  const bool nvls_tree_here =
      algorithm == CollectiveAlgorithm::NvlsTree && all_reduce && nodes > 1 && local > 1;
  if ((nvls_here || nvls_tree_here) && switches) {
    for (const auto& m : groups.members)
      out.endpoints.push_back(places.nvswitch[static_cast<std::size_t>(m.front())]);
    std::vector<std::int32_t> through, up;
    if (nvls_here && nodes > 1) through = switch_endpoints(places, places.sharp, out.endpoints);
    if (nvls_tree_here && uplinks) up = switch_endpoints(places, places.uplink, out.endpoints);
    out.steps.push_back(nvls(kind, groups, bytes, n, nvls_tree_here,
                             through.empty() ? nullptr : &through, up.empty() ? nullptr : &up,
                             route_latency));
    out.algorithm = algorithm;
    out.channels = nodes > 1 ? groups.channels() : local;
    return out;
  }
  if (algorithm == CollectiveAlgorithm::CollNet && all_reduce && sharp) {
    const std::vector<std::int32_t> through = switch_endpoints(places, places.sharp, out.endpoints);
    out.steps.push_back(collnet(groups, bytes, through, route_latency));
    out.algorithm = algorithm;
    out.channels = groups.channels();
    return out;
  }
  if (algorithm == CollectiveAlgorithm::Hierarchical && all_reduce && groups.regular && nodes > 1 &&
      local > 1) {
    hierarchical(groups, bytes, ring, out.steps);
    out.algorithm = algorithm;
    return out;
  }
  // The ring (and PAT's bytes on the ring's flows; and every algorithm where it cannot run).
  out.algorithm = algorithm == CollectiveAlgorithm::Pat ? algorithm : CollectiveAlgorithm::Ring;
  const std::int32_t count = all_reduce ? 2 * (n - 1) : n - 1;
  const double chunk = bytes / n;
  if (!groups.regular) {
    std::vector<std::int32_t> all(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    plain_ring(all, chunk, count, out.steps, 0, ring);
  } else {
    channel_ring(groups, chunk, count, ring, out.steps);
    out.channels = groups.channels();
  }
  if (!route_latency) {
    for (CollectiveStep& s : out.steps)
      for (CollectiveTransfer& t : s) t.latencies = 0;
  }
  return out;
}

}  // namespace bubblesim
