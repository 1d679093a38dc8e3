#include "topologies/route_search.h"

#include <algorithm>
#include <utility>

namespace bubblesim {

PathCost combine(PathCost a, PathCost b) {
  PathCost r;
  if (__builtin_add_overflow(a.ps, b.ps, &r.ps)) r.ps = std::numeric_limits<std::int64_t>::max();
  if (__builtin_add_overflow(a.hops, b.hops, &r.hops))
    r.hops = std::numeric_limits<std::int32_t>::max();
  return r;
}

LinkGraph::LinkGraph(std::int32_t vertex_count, std::vector<SearchLink> all)
    : vertices(vertex_count), links(std::move(all)) {
  const auto n = static_cast<std::size_t>(vertices);
  out_begin.assign(n + 1, 0);
  in_begin.assign(n + 1, 0);
  for (const SearchLink& l : links) {
    ++out_begin[static_cast<std::size_t>(l.source) + 1];
    ++in_begin[static_cast<std::size_t>(l.target) + 1];
  }
  for (std::size_t v = 0; v < n; ++v) {
    out_begin[v + 1] += out_begin[v];
    in_begin[v + 1] += in_begin[v];
  }
  out.resize(links.size());
  in.resize(links.size());
  std::vector<std::int32_t> out_next(out_begin.begin(), out_begin.end() - 1);
  std::vector<std::int32_t> in_next(in_begin.begin(), in_begin.end() - 1);
  for (LinkId l = 0; l < static_cast<LinkId>(links.size()); ++l) {
    const SearchLink& info = links[static_cast<std::size_t>(l)];
    out[static_cast<std::size_t>(out_next[static_cast<std::size_t>(info.source)]++)] = l;
    in[static_cast<std::size_t>(in_next[static_cast<std::size_t>(info.target)]++)] = l;
  }
  for (std::size_t v = 0; v < n; ++v) {
    std::stable_sort(in.begin() + in_begin[v], in.begin() + in_begin[v + 1],
                     [&](LinkId a, LinkId b) {
                       return links[static_cast<std::size_t>(a)].source <
                              links[static_cast<std::size_t>(b)].source;
                     });
  }
  min_out.assign(n, kInfiniteCost);
  for (const SearchLink& l : links) {
    PathCost& m = min_out[static_cast<std::size_t>(l.source)];
    m = std::min(m, l.cost);
  }
}

std::pair<std::int32_t, std::int32_t> LinkGraph::in_links_from(VertexId to, VertexId from) const {
  const auto first = in.begin() + in_begin[static_cast<std::size_t>(to)];
  const auto last = in.begin() + in_begin[static_cast<std::size_t>(to) + 1];
  auto source_of = [&](LinkId l) { return links[static_cast<std::size_t>(l)].source; };
  const auto lo = std::partition_point(first, last, [&](LinkId l) { return source_of(l) < from; });
  const auto hi = std::partition_point(lo, last, [&](LinkId l) { return source_of(l) == from; });
  return {static_cast<std::int32_t>(lo - in.begin()), static_cast<std::int32_t>(hi - in.begin())};
}

SourceSearch::SourceSearch(const LinkGraph& graph, VertexId source, VertexId through,
                           Direction direction)
    : graph_(&graph), source_(source), through_vertex_(through), direction_(direction) {
  const auto n = static_cast<std::size_t>(graph.vertices);
  cost_.assign(n, kInfiniteCost);
  key_.assign(n, kInfiniteCost);
  settled_.assign(n, 0);
  if (through_vertex_ >= 0) through_.assign(n, 0);
  heap_pos_.assign(n, -1);
  push_or_decrease(source, PathCost{});
}

void SourceSearch::restart(VertexId source, VertexId through, const SourceSearch* goal) {
  for (VertexId v : touched_) {
    const auto vu = static_cast<std::size_t>(v);
    cost_[vu] = kInfiniteCost;
    key_[vu] = kInfiniteCost;
    settled_[vu] = 0;
    heap_pos_[vu] = -1;
    if (!through_.empty()) through_[vu] = 0;
  }
  touched_.clear();
  heap_.clear();
  order_.clear();
  relaxations_ = 0;
  upper_ = kInfiniteCost;
  source_ = source;
  through_vertex_ = through;
  goal_ = goal;
  if (through_vertex_ >= 0 && through_.empty())
    through_.assign(static_cast<std::size_t>(graph_->vertices), 0);
  push_or_decrease(source, PathCost{});
}

PathCost SourceSearch::lower_bound(VertexId v) const {
  if (settled(v)) return cost(v);
  return heap_.empty() ? kInfiniteCost : cost(heap_.front());
}

bool SourceSearch::prune(VertexId v, const PathCost& c) {
  // A vertex the reverse search settled closes a route: cost + its exact cost to go bounds the
  // route's cost from above. A vertex whose key exceeds that bound is on no shortest route.
  if (goal_->settled(v)) upper_ = std::min(upper_, combine(c, goal_->cost(v)));
  return !(upper_ < combine(c, goal_->lower_bound(v)));
}

bool SourceSearch::step_within(std::int64_t budget) {
  if (heap_.empty()) return false;
  const auto vu = static_cast<std::size_t>(heap_.front());
  const std::vector<std::int32_t>& begin =
      direction_ == Direction::Forward ? graph_->out_begin : graph_->in_begin;
  if (relaxations_ + (begin[vu + 1] - begin[vu]) > budget) return false;
  return step();
}

void SourceSearch::settle_goal() {
  // A vertex on a shortest route to the target has a key at most the target's, and a smaller
  // cost when equal (every link adds a hop): it is settled before the target.
  settle(goal_->source());
}

bool SourceSearch::step() {
  if (heap_.empty()) return false;
  const VertexId v = pop();
  settled_[static_cast<std::size_t>(v)] = 1;
  order_.push_back(v);
  // Every link reaching a vertex at its cost comes from a vertex settled before it (each link
  // adds a hop), so through() is final once the vertex is settled: relaxing a link passes the
  // flag on to an equally short route and replaces it for a shorter one.
  if (v == through_vertex_) through_[static_cast<std::size_t>(v)] = 1;
  const std::uint8_t passes = through_vertex_ >= 0 ? through_[static_cast<std::size_t>(v)] : 0;
  const PathCost base = cost(v);
  const auto vu = static_cast<std::size_t>(v);
  const bool forward = direction_ == Direction::Forward;
  const std::vector<std::int32_t>& begin = forward ? graph_->out_begin : graph_->in_begin;
  const std::vector<LinkId>& adjacent = forward ? graph_->out : graph_->in;
  relaxations_ += begin[vu + 1] - begin[vu];
  if (goal_ != nullptr && relax_hub(v, base, passes)) return true;
  for (std::int32_t i = begin[vu]; i < begin[vu + 1]; ++i)
    relax(adjacent[static_cast<std::size_t>(i)], base, passes);
  return true;
}

void SourceSearch::relax(LinkId link, const PathCost& base, std::uint8_t passes) {
  const SearchLink& l = graph_->links[static_cast<std::size_t>(link)];
  const VertexId next = direction_ == Direction::Forward ? l.target : l.source;
  if (settled(next)) return;
  const PathCost c = combine(base, l.cost);
  if (c < cost(next)) {
    if (goal_ != nullptr && !prune(next, c)) return;
    push_or_decrease(next, c);
    if (through_vertex_ >= 0) through_[static_cast<std::size_t>(next)] = passes;
  } else if (passes != 0 && c == cost(next)) {
    through_[static_cast<std::size_t>(next)] = 1;
  }
}

bool SourceSearch::relax_hub(VertexId v, const PathCost& base, std::uint8_t passes) {
  // Worth it only where the reverse search settled far fewer vertices than `v` has links: a
  // network switch of a large cluster (65,536 links out of one switch: every route relaxed them
  // all, milliseconds a route).
  const std::vector<VertexId>& near = goal_->order();
  if (graph_->out_degree(v) <= 8 * static_cast<std::int32_t>(near.size()) + 64) return false;
  // Links into vertices the reverse search settled (their cost to go is exact): each found by a
  // binary search among the links into it. They set upper_, the best route known.
  for (VertexId w : near) {
    const auto [first, last] = graph_->in_links_from(w, v);
    for (std::int32_t i = first; i < last; ++i)
      relax(graph_->in[static_cast<std::size_t>(i)], base, passes);
  }
  // Every other vertex costs at least the reverse search's radius to go (a consistent bound), so
  // a route through any of them costs at least base + the cheapest link out + the radius: when
  // that is above the best route known, none of them is on a shortest route (prune()'s test).
  const PathCost radius = goal_->heap_.empty() ? kInfiniteCost : goal_->cost(goal_->heap_.front());
  const PathCost least =
      combine(combine(base, graph_->min_out[static_cast<std::size_t>(v)]), radius);
  if (upper_ < least) return true;
  return false;  // some may be: relax every link (those above are relaxed again, to no effect)
}

void SourceSearch::settle(VertexId v) {
  while (!settled(v) && step()) {
  }
}

void SourceSearch::settle_through(const PathCost& bound) {
  while (!heap_.empty() && !(bound < cost(heap_.front()))) step();
}

LinkId SourceSearch::best_in_link(VertexId v, bool through_only, VertexId flow) const {
  auto qualifies = [&](LinkId l) {
    const SearchLink& info = graph_->links[static_cast<std::size_t>(l)];
    return settled(info.source) && (!through_only || through(info.source)) &&
           combine(cost(info.source), info.cost) == cost(v);
  };
  auto spreads = [&](LinkId l) {
    return !graph_->spreads.empty() && graph_->spreads[static_cast<std::size_t>(
                                           graph_->links[static_cast<std::size_t>(l)].source)] != 0;
  };
  // The qualifying links in the order of `in` (source id, then link id). Into a vertex with far
  // more links than this search settled vertices (a switch of a large cluster), only the links
  // from settled vertices can qualify: each found by a binary search, sources in id order.
  std::vector<LinkId> candidates;
  const auto vu = static_cast<std::size_t>(v);
  if (graph_->in_degree(v) > 8 * static_cast<std::int32_t>(order_.size()) + 64) {
    std::vector<VertexId> sources(order_);
    std::sort(sources.begin(), sources.end());
    for (VertexId x : sources) {
      const auto [first, last] = graph_->in_links_from(v, x);
      for (std::int32_t i = first; i < last; ++i) {
        const LinkId l = graph_->in[static_cast<std::size_t>(i)];
        if (qualifies(l)) candidates.push_back(l);
      }
    }
  } else {
    for (std::int32_t i = graph_->in_begin[vu]; i < graph_->in_begin[vu + 1]; ++i) {
      const LinkId l = graph_->in[static_cast<std::size_t>(i)];
      if (qualifies(l)) candidates.push_back(l);
    }
  }
  if (candidates.empty()) return -1;
  // The lowest id decides unless several qualify and every one comes from a spreading switch.
  if (flow < 0 || candidates.size() == 1 ||
      !std::all_of(candidates.begin(), candidates.end(), spreads))
    return candidates.front();
  // splitmix64 of (route source, destination): deterministic, spread evenly over the candidates.
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source_)) << 32) |
                    static_cast<std::uint32_t>(flow);
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return candidates[static_cast<std::size_t>(x % static_cast<std::uint64_t>(candidates.size()))];
}

LinkId SourceSearch::via(VertexId v, VertexId flow) const {
  if (v == source_) return -1;
  return best_in_link(v, false, flow);
}

LinkId SourceSearch::via_through(VertexId v, VertexId flow) const {
  if (v == source_ || v == through_vertex_) return via(v, flow);
  return best_in_link(v, true, flow);
}

std::size_t SourceSearch::memory_bytes() const {
  return (cost_.capacity() + key_.capacity()) * sizeof(PathCost) + settled_.capacity() +
         through_.capacity() +
         (heap_pos_.capacity() + heap_.capacity() + order_.capacity() + touched_.capacity()) *
             sizeof(std::int32_t);
}

bool SourceSearch::before(VertexId a, VertexId b) const {
  const PathCost& ka = key_[static_cast<std::size_t>(a)];
  const PathCost& kb = key_[static_cast<std::size_t>(b)];
  if (ka != kb) return ka < kb;
  const PathCost& ca = cost(a);
  const PathCost& cb = cost(b);
  return ca < cb || (ca == cb && a < b);
}

void SourceSearch::push_or_decrease(VertexId v, const PathCost& c) {
  if (cost_[static_cast<std::size_t>(v)] == kInfiniteCost) touched_.push_back(v);
  cost_[static_cast<std::size_t>(v)] = c;
  key_[static_cast<std::size_t>(v)] = goal_ != nullptr ? combine(c, goal_->lower_bound(v)) : c;
  std::int32_t& pos = heap_pos_[static_cast<std::size_t>(v)];
  if (pos < 0) {
    pos = static_cast<std::int32_t>(heap_.size());
    heap_.push_back(v);
  }
  sift_up(static_cast<std::size_t>(pos));
}

VertexId SourceSearch::pop() {
  const VertexId top = heap_.front();
  heap_pos_[static_cast<std::size_t>(top)] = -1;
  const VertexId last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    heap_.front() = last;
    heap_pos_[static_cast<std::size_t>(last)] = 0;
    sift_down(0);
  }
  return top;
}

void SourceSearch::sift_up(std::size_t i) {
  const VertexId v = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(v, heap_[parent])) break;
    heap_[i] = heap_[parent];
    heap_pos_[static_cast<std::size_t>(heap_[i])] = static_cast<std::int32_t>(i);
    i = parent;
  }
  heap_[i] = v;
  heap_pos_[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(i);
}

void SourceSearch::sift_down(std::size_t i) {
  const VertexId v = heap_[i];
  const std::size_t n = heap_.size();
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], v)) break;
    heap_[i] = heap_[child];
    heap_pos_[static_cast<std::size_t>(heap_[i])] = static_cast<std::int32_t>(i);
    i = child;
  }
  heap_[i] = v;
  heap_pos_[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(i);
}

}  // namespace bubblesim
