#include "sim/report/topology_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <utility>

namespace bubblesim {
namespace {

using Adjacency = std::vector<std::vector<VertexId>>;

Adjacency undirected_neighbours(const Topology& t) {
  Adjacency adj(static_cast<std::size_t>(t.vertex_count()));
  for (LinkId l = 0; l < t.link_count(); ++l)
    adj[static_cast<std::size_t>(t.link_source(l))].push_back(t.link_target(l));
  return adj;
}

/// Hops from the nearest GPU; a vertex no GPU reaches goes one above the highest layer.
std::vector<std::int32_t> hop_layers(const Topology& t, const Adjacency& adj) {
  std::vector<std::int32_t> layer(adj.size(), -1);
  std::deque<VertexId> queue;
  for (VertexId g : t.gpus()) {
    layer[static_cast<std::size_t>(g)] = 0;
    queue.push_back(g);
  }
  std::int32_t highest = 0;
  while (!queue.empty()) {
    const VertexId v = queue.front();
    queue.pop_front();
    for (VertexId n : adj[static_cast<std::size_t>(v)]) {
      auto& ln = layer[static_cast<std::size_t>(n)];
      if (ln >= 0) continue;
      ln = layer[static_cast<std::size_t>(v)] + 1;
      highest = std::max(highest, ln);
      queue.push_back(n);
    }
  }
  for (auto& l : layer)
    if (l < 0) l = highest + 1;
  return layer;
}

/// The node prefix of a vertex name ("n3" of "n3.gpu0"), or the whole name.
std::string node_prefix(const std::string& name) {
  const auto dot = name.find('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

struct Group {
  std::string label;
  std::vector<VertexId> members;
  std::int32_t layer = std::numeric_limits<std::int32_t>::max();
};

/// Groups by node prefix, in order of their first vertex.
std::vector<Group> groups_by_node(const Topology& t, const std::vector<std::int32_t>& layer) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    const std::string key = node_prefix(t.vertex_name(v));
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back(Group{key, {}, std::numeric_limits<std::int32_t>::max()});
    Group& g = groups[it->second];
    g.members.push_back(v);
    g.layer = std::min(g.layer, layer[static_cast<std::size_t>(v)]);
  }
  return groups;
}

/// Merges consecutive groups of each layer so that no layer has more than its share of
/// `max_nodes`.
std::vector<Group> merge_within_layers(std::vector<Group> groups, std::size_t max_nodes) {
  std::map<std::int32_t, std::vector<std::size_t>> by_layer;
  for (std::size_t i = 0; i < groups.size(); ++i) by_layer[groups[i].layer].push_back(i);
  const std::size_t share = std::max<std::size_t>(1, max_nodes / by_layer.size());
  std::vector<Group> out;
  for (const auto& [layer, members] : by_layer) {
    const std::size_t per = (members.size() + share - 1) / share;  // groups per merged group
    for (std::size_t start = 0; start < members.size(); start += per) {
      const std::size_t end = std::min(members.size(), start + per);
      Group merged{groups[members[start]].label, {}, layer};
      if (end - start > 1)
        merged.label =
            fmt::format("{} .. {}", groups[members[start]].label, groups[members[end - 1]].label);
      for (std::size_t k = start; k < end; ++k) {
        const auto& m = groups[members[k]].members;
        merged.members.insert(merged.members.end(), m.begin(), m.end());
      }
      std::sort(merged.members.begin(), merged.members.end());
      out.push_back(std::move(merged));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Group& a, const Group& b) { return a.members.front() < b.members.front(); });
  return out;
}

}  // namespace

TopologyLayout layout_topology(const Topology& t, std::size_t max_nodes) {
  const Adjacency adj = undirected_neighbours(t);
  const std::vector<std::int32_t> layer = hop_layers(t, adj);
  std::vector<Group> groups;
  TopologyLayout out;
  if (static_cast<std::size_t>(t.vertex_count()) <= max_nodes) {
    for (VertexId v = 0; v < t.vertex_count(); ++v)
      groups.push_back(Group{t.vertex_name(v), {v}, layer[static_cast<std::size_t>(v)]});
  } else {
    groups = groups_by_node(t, layer);
    out.aggregation = fmt::format("{} vertices, more than the {} drawn: one box per node",
                                  t.vertex_count(), max_nodes);
    if (groups.size() > max_nodes) {
      groups = merge_within_layers(std::move(groups), max_nodes);
      out.aggregation += ", consecutive nodes and switches of a layer merged";
    }
  }
  std::vector<std::size_t> node_of(static_cast<std::size_t>(t.vertex_count()));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    TopologyNode n;
    n.label = groups[g].label;
    n.members = groups[g].members;
    n.layer = groups[g].layer;
    for (VertexId v : n.members) {
      node_of[static_cast<std::size_t>(v)] = g;
      if (t.vertex_kind(v) == VertexKind::Gpu) ++n.gpus;
    }
    out.nodes.push_back(std::move(n));
  }
  std::map<std::pair<std::size_t, std::size_t>, std::vector<LinkId>> edges;
  for (LinkId l = 0; l < t.link_count(); ++l) {
    const std::size_t a = node_of[static_cast<std::size_t>(t.link_source(l))];
    const std::size_t b = node_of[static_cast<std::size_t>(t.link_target(l))];
    if (a == b)
      out.nodes[a].inner_links.push_back(l);
    else
      edges[{std::min(a, b), std::max(a, b)}].push_back(l);
  }
  for (auto& [ab, links] : edges) out.edges.push_back(TopologyEdge{ab.first, ab.second, links});

  // Order each layer by the mean position of its neighbours below, then wrap it into rows.
  std::vector<std::vector<std::size_t>> neighbours(out.nodes.size());
  for (const TopologyEdge& e : out.edges) {
    neighbours[e.a].push_back(e.b);
    neighbours[e.b].push_back(e.a);
  }
  std::map<std::int32_t, std::vector<std::size_t>> by_layer;
  for (std::size_t i = 0; i < out.nodes.size(); ++i) by_layer[out.nodes[i].layer].push_back(i);
  std::vector<double> x(out.nodes.size(), -1.0);     // placed nodes' positions in [0, 1]
  std::vector<std::vector<std::size_t>> layer_rows;  // bottom layer first
  for (auto& [l, members] : by_layer) {
    std::vector<std::pair<double, std::size_t>> keyed;
    for (std::size_t i = 0; i < members.size(); ++i) {
      double sum = 0.0;
      int count = 0;
      for (std::size_t n : neighbours[members[i]]) {
        if (x[n] < 0.0) continue;
        sum += x[n];
        ++count;
      }
      keyed.emplace_back(count > 0 ? sum / count : 2.0 + static_cast<double>(i), members[i]);
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t start = 0; start < keyed.size(); start += kTopologyGraphRowNodes) {
      const std::size_t end = std::min(keyed.size(), start + kTopologyGraphRowNodes);
      std::vector<std::size_t> row;
      for (std::size_t k = start; k < end; ++k) {
        row.push_back(keyed[k].second);
        x[keyed[k].second] =
            (static_cast<double>(k - start) + 0.5) / static_cast<double>(end - start);
      }
      layer_rows.push_back(std::move(row));
    }
  }
  out.rows = static_cast<std::int32_t>(layer_rows.size());
  for (std::size_t r = 0; r < layer_rows.size(); ++r) {
    const auto& row = layer_rows[r];
    out.columns = std::max(out.columns, static_cast<std::int32_t>(row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) {
      out.nodes[row[c]].row = out.rows - 1 - static_cast<std::int32_t>(r);  // GPUs at the bottom
      out.nodes[row[c]].column = static_cast<std::int32_t>(c);
    }
  }
  return out;
}

}  // namespace bubblesim
