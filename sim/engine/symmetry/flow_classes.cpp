#include "sim/engine/symmetry/flow_classes.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace bubblesim {

std::int32_t FlowClasses::Partition::add_class(std::span<const std::int32_t> elements) {
  const auto c = static_cast<std::int32_t>(first_.size());
  first_.push_back(static_cast<std::int32_t>(elems_.size()));
  for (std::int32_t e : elements) {
    const auto eu = static_cast<std::size_t>(e);
    if (pos_.size() <= eu) {
      pos_.resize(eu + 1, -1);
      cls_.resize(eu + 1, -1);
    }
    pos_[eu] = static_cast<std::int32_t>(elems_.size());
    cls_[eu] = c;
    elems_.push_back(e);
  }
  end_.push_back(static_cast<std::int32_t>(elems_.size()));
  return c;
}

std::int32_t FlowClasses::Partition::split_off(std::int32_t c, std::span<const std::int32_t> part) {
  const auto cu = static_cast<std::size_t>(c);
  const auto child = static_cast<std::int32_t>(first_.size());
  const std::int32_t begin = first_[cu];
  // Each element of `part` changes places with the first element of what is left of c.
  for (std::int32_t e : part) {
    const auto i = static_cast<std::size_t>(pos_[static_cast<std::size_t>(e)]);
    const auto j = static_cast<std::size_t>(first_[cu]);
    std::swap(elems_[i], elems_[j]);
    pos_[static_cast<std::size_t>(elems_[i])] = static_cast<std::int32_t>(i);
    pos_[static_cast<std::size_t>(elems_[j])] = static_cast<std::int32_t>(j);
    cls_[static_cast<std::size_t>(e)] = child;
    ++first_[cu];
  }
  first_.push_back(begin);
  end_.push_back(first_[cu]);
  return child;
}

FlowClasses::FlowClasses(const std::vector<double>& link_capacity)
    : link_capacity_(link_capacity), on_link_(link_capacity.size()) {
  // One class per capacity, in the order of the capacities (deterministic).
  std::vector<std::int32_t> order(link_capacity.size());
  for (std::size_t l = 0; l < order.size(); ++l) order[l] = static_cast<std::int32_t>(l);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return link_capacity[static_cast<std::size_t>(a)] < link_capacity[static_cast<std::size_t>(b)];
  });
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && link_capacity[static_cast<std::size_t>(order[j])] ==
                                   link_capacity[static_cast<std::size_t>(order[i])])
      ++j;
    links_.add_class(std::span<const std::int32_t>(order.data() + i, j - i));
    i = j;
  }
  link_count_.assign(link_capacity.size(), 0.0);
  queued_link_.assign(static_cast<std::size_t>(links_.classes()), 0);
}

std::int32_t FlowClasses::add_shape(const std::vector<ShapeFlow>& flows) {
  for (const ShapeFlow& f : flows) {
    if (f.links.empty()) throw std::invalid_argument("a flow of a shape needs at least one link");
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      const LinkId l = f.links[i];
      if (l < 0 || static_cast<std::size_t>(l) >= link_capacity_.size())
        throw std::invalid_argument(
            fmt::format("a flow of a shape crosses link {}, not in the "
                        "network",
                        l));
      if (std::find(f.links.begin() + static_cast<std::ptrdiff_t>(i) + 1, f.links.end(), l) !=
          f.links.end())
        throw std::invalid_argument("a flow of a shape must not cross the same link twice");
    }
  }
  const auto shape = static_cast<std::int32_t>(shape_classes_.size());
  shape_classes_.emplace_back();
  const auto first = static_cast<std::int32_t>(flow_weight_.size());
  for (const ShapeFlow& f : flows) {
    const auto id = static_cast<std::int32_t>(flow_weight_.size());
    flow_links_.insert(flow_links_.end(), f.links.begin(), f.links.end());
    flow_first_.push_back(static_cast<std::int32_t>(flow_links_.size()));
    flow_weight_.push_back(f.weight);
    flow_member_.push_back(f.member);
    for (LinkId l : f.links) on_link_[static_cast<std::size_t>(l)].push_back(id);
  }
  flow_count_.resize(flow_weight_.size(), 0.0);
  // The new flows start in classes of their own: by bytes, weight and latency, then by the
  // multiset of link classes each crosses, so that they are stable against every link class.
  std::vector<std::int32_t> order(flows.size());
  std::vector<std::vector<LinkClassId>> signature(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    order[i] = static_cast<std::int32_t>(i);
    for (LinkId l : flows[i].links) signature[i].push_back(links_.class_of(l));
    std::sort(signature[i].begin(), signature[i].end());
  }
  auto key = [&](std::int32_t i) {
    const ShapeFlow& f = flows[static_cast<std::size_t>(i)];
    return std::tie(f.bytes, f.weight, f.latency, signature[static_cast<std::size_t>(i)]);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return key(a) < key(b); });
  std::vector<std::int32_t> members;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    members.clear();
    while (j < order.size() && key(order[j]) == key(order[i]))
      members.push_back(first + order[j++]);
    const std::int32_t c = flows_.add_class(members);
    const ShapeFlow& f = flows[static_cast<std::size_t>(order[i])];
    ClassInfo info{f.bytes, f.weight, f.latency, shape, {}};
    for (std::int32_t m : members) {
      const std::int32_t member = flow_member_[static_cast<std::size_t>(m)];
      if (info.members.empty() || info.members.back().member != member) {
        auto at =
            std::lower_bound(info.members.begin(), info.members.end(), member,
                             [](const MemberCount& mc, std::int32_t v) { return mc.member < v; });
        if (at == info.members.end() || at->member != member)
          at = info.members.insert(at, MemberCount{member, 0});
        ++at->flows;
      } else {
        ++info.members.back().flows;
      }
    }
    info_.push_back(std::move(info));
    shape_classes_.back().push_back(c);
    queued_flow_.push_back(0);
    enqueue(false, c);
    i = j;
  }
  refine();
  return shape;
}

void FlowClasses::enqueue(bool link, std::int32_t cls) {
  std::vector<char>& queued = link ? queued_link_ : queued_flow_;
  if (queued.size() <= static_cast<std::size_t>(cls))
    queued.resize(static_cast<std::size_t>(cls) + 1, 0);
  if (queued[static_cast<std::size_t>(cls)]) return;
  queued[static_cast<std::size_t>(cls)] = 1;
  queue_.push_back(Splitter{link, cls});
}

void FlowClasses::refine() {
  while (!queue_.empty()) {
    const Splitter s = queue_.back();
    queue_.pop_back();
    (s.link ? queued_link_ : queued_flow_)[static_cast<std::size_t>(s.cls)] = 0;
    if (s.link)
      split_flows_by(s.cls);
    else
      split_links_by(s.cls);
  }
}

void FlowClasses::split_links_by(std::int32_t flow_class) {
  std::vector<std::pair<std::int32_t, double>> touched;
  for (std::int32_t f : flows_.members(flow_class)) {
    const double w = flow_weight_[static_cast<std::size_t>(f)];
    for (LinkId l : flow_links(f)) {
      double& count = link_count_[static_cast<std::size_t>(l)];
      if (count == 0.0) touched.emplace_back(l, 0.0);
      count += w;
    }
  }
  for (auto& [l, count] : touched) {
    count = link_count_[static_cast<std::size_t>(l)];
    link_count_[static_cast<std::size_t>(l)] = 0.0;
  }
  split_by_counts(true, touched);
}

void FlowClasses::split_flows_by(std::int32_t link_class) {
  std::vector<std::pair<std::int32_t, double>> touched;
  for (std::int32_t l : links_.members(link_class)) {
    for (std::int32_t f : on_link_[static_cast<std::size_t>(l)]) {
      double& count = flow_count_[static_cast<std::size_t>(f)];
      if (count == 0.0) touched.emplace_back(f, 0.0);
      count += 1.0;
    }
  }
  for (auto& [f, count] : touched) {
    count = flow_count_[static_cast<std::size_t>(f)];
    flow_count_[static_cast<std::size_t>(f)] = 0.0;
  }
  split_by_counts(false, touched);
}

void FlowClasses::split_by_counts(bool link,
                                  std::vector<std::pair<std::int32_t, double>>& touched) {
  Partition& p = link ? links_ : flows_;
  std::sort(touched.begin(), touched.end(), [&](const auto& a, const auto& b) {
    const std::int32_t ca = p.class_of(a.first), cb = p.class_of(b.first);
    return std::tie(ca, a.second, a.first) < std::tie(cb, b.second, b.first);
  });
  std::vector<std::int32_t> part;
  for (std::size_t i = 0; i < touched.size();) {
    const std::int32_t x = p.class_of(touched[i].first);
    std::size_t end = i;
    while (end < touched.size() && p.class_of(touched[end].first) == x) ++end;
    const bool all_touched = static_cast<std::int32_t>(end - i) == p.size(x);
    // Groups of equal count; when every member is touched the last group keeps x's id.
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    for (std::size_t g = i; g < end;) {
      std::size_t h = g;
      while (h < end && touched[h].second == touched[g].second) ++h;
      groups.emplace_back(g, h);
      g = h;
    }
    if (all_touched) groups.pop_back();
    const std::vector<char>& queued = link ? queued_link_ : queued_flow_;
    const bool x_queued =
        static_cast<std::size_t>(x) < queued.size() && queued[static_cast<std::size_t>(x)];
    std::vector<std::int32_t> parts;
    for (const auto& [g, h] : groups) {
      part.clear();
      for (std::size_t k = g; k < h; ++k) part.push_back(touched[k].first);
      const std::int32_t child = p.split_off(x, part);
      parts.push_back(child);
      if (link) {
        link_splits_.emplace_back(x, child);
      } else {
        on_flow_class_split(x, child);
      }
    }
    if (!parts.empty()) {
      // Hopcroft: the parts of a class already queued are all queued; otherwise every part but
      // the largest (stability against the whole and the others implies it for the largest).
      if (x_queued) {
        for (std::int32_t c : parts) enqueue(link, c);
      } else {
        std::int32_t largest = x;
        for (std::int32_t c : parts)
          if (p.size(c) > p.size(largest)) largest = c;
        if (largest != x) enqueue(link, x);
        for (std::int32_t c : parts)
          if (c != largest) enqueue(link, c);
      }
    }
    i = end;
  }
}

void FlowClasses::on_flow_class_split(std::int32_t parent, std::int32_t child) {
  ClassInfo info = info_[static_cast<std::size_t>(parent)];
  info.members.clear();
  for (std::int32_t f : flows_.members(child)) {
    const std::int32_t member = flow_member_[static_cast<std::size_t>(f)];
    auto at = std::lower_bound(info.members.begin(), info.members.end(), member,
                               [](const MemberCount& mc, std::int32_t v) { return mc.member < v; });
    if (at == info.members.end() || at->member != member)
      at = info.members.insert(at, MemberCount{member, 0});
    ++at->flows;
  }
  // The parent keeps what the child did not take.
  std::vector<MemberCount>& rest = info_[static_cast<std::size_t>(parent)].members;
  for (const MemberCount& mc : info.members) {
    auto at = std::lower_bound(rest.begin(), rest.end(), mc.member,
                               [](const MemberCount& m, std::int32_t v) { return m.member < v; });
    at->flows -= mc.flows;
    if (at->flows == 0) rest.erase(at);
  }
  shape_classes_[static_cast<std::size_t>(info.shape)].push_back(child);
  info_.push_back(std::move(info));
  flow_splits_.emplace_back(parent, child);
}

void FlowClasses::loads(ClassId c, std::vector<LinkClassId>& link_classes,
                        std::vector<double>& multiplicity) const {
  link_classes.clear();
  multiplicity.clear();
  const std::span<const LinkId> route = links_of_member(c);
  const double members = static_cast<double>(size(c)) * weight(c);
  for (LinkId l : route) {
    const LinkClassId lc = links_.class_of(l);
    if (std::find(link_classes.begin(), link_classes.end(), lc) != link_classes.end()) continue;
    // The flows of the class cross the links of lc (members x how many of its links each
    // crosses) spread evenly over them: the partition is equitable.
    const auto crossed = std::count_if(route.begin(), route.end(),
                                       [&](LinkId k) { return links_.class_of(k) == lc; });
    link_classes.push_back(lc);
    multiplicity.push_back(members * static_cast<double>(crossed) /
                           static_cast<double>(links_.size(lc)));
  }
}

std::span<const LinkId> FlowClasses::links_of_member(ClassId c) const {
  return flow_links(flows_.first_of(c));
}

std::vector<std::pair<FlowClasses::ClassId, FlowClasses::ClassId>> FlowClasses::take_flow_splits() {
  std::vector<std::pair<ClassId, ClassId>> out;
  out.swap(flow_splits_);
  return out;
}

std::vector<std::pair<FlowClasses::LinkClassId, FlowClasses::LinkClassId>>
FlowClasses::take_link_splits() {
  std::vector<std::pair<LinkClassId, LinkClassId>> out;
  out.swap(link_splits_);
  return out;
}

}  // namespace bubblesim
