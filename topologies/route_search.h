#pragma once
// Internal to Topology: the directed links as compact adjacency arrays, and a shortest-path search
// from one source that settles vertices in cost order only as far as a query needs and can be
// resumed by the next query from the same source (topology.cpp caches a few of them).

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace bubblesim {

using VertexId = std::int32_t;
using LinkId = std::int32_t;

/// Route cost: the time to move 1 MiB alone, then the hop count (for ties). Compared
/// lexicographically; sums saturate so absurd latencies cannot wrap around.
struct PathCost {
  std::int64_t ps = 0;
  std::int32_t hops = 0;
  friend auto operator<=>(const PathCost&, const PathCost&) = default;
};

PathCost combine(PathCost a, PathCost b);

inline constexpr PathCost kInfiniteCost{std::numeric_limits<std::int64_t>::max(),
                                        std::numeric_limits<std::int32_t>::max()};

/// One directed link as the search sees it.
struct SearchLink {
  VertexId source = 0;
  VertexId target = 0;
  PathCost cost;
};

/// The links leaving and entering every vertex; entering links ordered by (source id, link id).
struct LinkGraph {
  LinkGraph(std::int32_t vertices, std::vector<SearchLink> links);
  std::int32_t vertices = 0;
  /// Per vertex (empty: none): equal-cost routes leaving it may be spread (ECMP,
  /// SourceSearch::via).
  std::vector<std::uint8_t> spreads;
  std::vector<SearchLink> links;
  std::vector<std::int32_t> out_begin, in_begin;  // vertices + 1 offsets into out / in
  std::vector<LinkId> out, in;
  /// Per vertex: the cheapest link leaving it (kInfiniteCost when none). A goal-directed search
  /// bounds every route through a vertex's links with it at once (SourceSearch::step).
  std::vector<PathCost> min_out;
  std::int32_t out_degree(VertexId v) const {
    return out_begin[static_cast<std::size_t>(v) + 1] - out_begin[static_cast<std::size_t>(v)];
  }
  std::int32_t in_degree(VertexId v) const {
    return in_begin[static_cast<std::size_t>(v) + 1] - in_begin[static_cast<std::size_t>(v)];
  }
  /// The links from `from` into `to`, as positions [first, last) of `in` (which is ordered by
  /// source): a binary search, for vertices with many links in.
  std::pair<std::int32_t, std::int32_t> in_links_from(VertexId to, VertexId from) const;
};

/// Dijkstra from one source with an indexed binary heap; costs are exact for settled vertices.
/// Optionally tracks which shortest routes pass one `through` vertex (the source GPU's own NIC).
///
/// A reverse search walks the links backwards (costs to the source instead of from it); a
/// forward search given one (`goal`) is goal-directed: it settles vertices in the order of
/// cost + the reverse search's lower bound of the cost still to go (A*; the bound is the reverse
/// cost where settled, else the reverse search's radius, which is consistent), then cost, then
/// vertex id. Costs of settled vertices stay exact and every vertex on a shortest route to the
/// goal's source is settled by settle_goal(), so via(), through() and the routes they give are
/// those of the plain search; what changes is how much of the graph is settled on the way (a
/// cross-leaf route on a 65,536-GPU fat tree: tens of vertices instead of all of them).
class SourceSearch {
 public:
  enum class Direction { Forward, Reverse };
  /// `through`: a vertex whose shortest routes are told apart (through(), via_through()); -1: none.
  SourceSearch(const LinkGraph& graph, VertexId source, VertexId through = -1,
               Direction direction = Direction::Forward);
  /// Starts over from `source`, reusing the per-vertex arrays: only the entries the previous
  /// search touched are cleared, so a restart costs what that search did, not the graph's size
  /// (65,536 searches on a 65,536-GPU fat tree: a memset of every array each would be 256 GB).
  /// `goal`: a reverse search from the target (forward searches only; it must outlive this one).
  void restart(VertexId source, VertexId through = -1, const SourceSearch* goal = nullptr);
  /// Goal-directed: settles the goal's source and every vertex on a shortest route to it.
  void settle_goal();
  /// A lower bound of the cost from `v` to this reverse search's source (consistent).
  PathCost lower_bound(VertexId v) const;

  VertexId source() const { return source_; }
  VertexId through_vertex() const { return through_vertex_; }
  /// Settles the next vertex in cost order; false when nothing reachable is left.
  bool step();
  /// Settles vertices until `v` is settled or nothing reachable is left.
  void settle(VertexId v);
  /// Settles every reachable vertex whose cost is at most `bound`.
  void settle_through(const PathCost& bound);
  bool settled(VertexId v) const { return settled_[static_cast<std::size_t>(v)] != 0; }
  const PathCost& cost(VertexId v) const { return cost_[static_cast<std::size_t>(v)]; }
  /// step() unless settling the next vertex would take the links followed past `budget`.
  bool step_within(std::int64_t budget);
  /// Links followed since the start (a measure of the work done).
  std::int64_t relaxations() const { return relaxations_; }
  /// Settled vertices in the order they were settled (nondecreasing cost).
  const std::vector<VertexId>& order() const { return order_; }
  /// The link into settled `v` on its route: among the links from settled vertices that reach `v`
  /// at its cost, the one from the lowest vertex id, then the lowest link id; -1 for the source.
  /// ECMP: when there are several and every one comes from a vertex that spreads (a network
  /// switch, LinkGraph::spreads), the one picked by a hash of (source, `flow`) instead, as a
  /// switch hashes a flow onto one of its equal-cost ports; `flow` is the route's destination
  /// (-1: no spreading).
  LinkId via(VertexId v, VertexId flow = -1) const;
  /// Whether some shortest route to settled `v` passes the `through` vertex (false without one).
  bool through(VertexId v) const {
    return !through_.empty() && through_[static_cast<std::size_t>(v)] != 0;
  }
  /// For `v` with through(v): via(v) among the links from vertices with through() (the link into
  /// the `through` vertex itself is via()'s).
  LinkId via_through(VertexId v, VertexId flow = -1) const;
  /// Bytes held (for the cache's memory bound).
  std::size_t memory_bytes() const;

 private:
  void push_or_decrease(VertexId v, const PathCost& c);
  VertexId pop();
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  bool before(VertexId a, VertexId b) const;
  // Goal-directed: whether `v`, reached at cost `c`, can still be on a shortest route.
  bool prune(VertexId v, const PathCost& c);
  // The first in-link of settled `v` from a settled vertex that reaches it at its cost and,
  // with `through_only`, has through() set.
  LinkId best_in_link(VertexId v, bool through_only, VertexId flow) const;
  // Relaxes one link out of settled `v` (cost `base`; `passes`: v's through() flag).
  void relax(LinkId link, const PathCost& base, std::uint8_t passes);
  // Goal-directed, from a vertex with many links out (a switch of thousands of ports): relaxes
  // only the links into vertices the reverse search settled, and the others only when the
  // cheapest of them could still be on a shortest route. Returns false when it did nothing
  // special (step() then relaxes every link).
  bool relax_hub(VertexId v, const PathCost& base, std::uint8_t passes);

  const LinkGraph* graph_;
  VertexId source_;
  VertexId through_vertex_;
  Direction direction_;
  const SourceSearch* goal_ = nullptr;
  std::vector<PathCost> cost_;
  std::vector<PathCost> key_;  // cost + the goal's lower bound (the heap's order); = cost without

  std::vector<std::uint8_t> through_;  // per vertex, when through_vertex_ >= 0
  std::vector<std::uint8_t> settled_;
  std::vector<std::int32_t> heap_pos_;  // -1: not in the heap
  std::vector<VertexId> heap_;
  std::vector<VertexId> order_;
  std::vector<VertexId> touched_;  // vertices whose cost is finite (cleared by restart)
  std::int64_t relaxations_ = 0;
  PathCost upper_ = kInfiniteCost;  // goal-directed: the cost of the best route found so far
};

}  // namespace bubblesim
