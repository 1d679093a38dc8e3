#include "sim/engine/symmetry/class_flows.h"

#include <algorithm>
#include <stdexcept>

namespace bubblesim {
namespace {

std::vector<double> class_capacities(const FlowClasses& classes) {
  std::vector<double> out;
  for (FlowClasses::LinkClassId c = 0; c < classes.link_classes(); ++c)
    out.push_back(classes.capacity(c));
  return out;
}

}  // namespace

ClassFlows::ClassFlows(const std::vector<double>& link_capacity)
    : classes_(link_capacity), solver_(class_capacities(classes_)) {}

std::int32_t ClassFlows::add_shape(const std::vector<ShapeFlow>& flows, std::int32_t members,
                                   Time now) {
  std::vector<std::int32_t> per_member(static_cast<std::size_t>(std::max(members, 0)), 0);
  for (const ShapeFlow& f : flows) {
    if (f.member < 0 || f.member >= members)
      throw std::invalid_argument("a flow of a shape names a member the shape does not have");
    ++per_member[static_cast<std::size_t>(f.member)];
  }
  const std::int32_t shape = classes_.add_shape(flows);
  shape_members_.push_back(members);
  shape_member_flows_.push_back(std::move(per_member));
  ++stats_.shapes;
  rebase(now);
  return shape;
}

std::int32_t ClassFlows::single(const std::vector<LinkId>& links, double weight, Time now) {
  auto key = std::make_pair(links, weight);
  if (auto it = singles_.find(key); it != singles_.end()) return it->second;
  const std::int32_t shape = add_shape({ShapeFlow{links, 1.0, weight, Time::zero(), 0}}, 1, now);
  singles_.emplace(std::move(key), shape);
  return shape;
}

std::int32_t ClassFlows::launch(std::int32_t shape, double scale, Time extra_latency, Time now) {
  std::int32_t id;
  if (free_launches_.empty()) {
    id = static_cast<std::int32_t>(launches_.size());
    launches_.emplace_back();
  } else {
    id = free_launches_.back();
    free_launches_.pop_back();
  }
  Launch& l = launches_[static_cast<std::size_t>(id)];
  l.shape = shape;
  l.scale = scale;
  l.extra = extra_latency;
  l.outstanding = shape_member_flows_[static_cast<std::size_t>(shape)];
  l.last.assign(l.outstanding.size(), Time::zero());
  const std::vector<FlowClasses::ClassId>& cls = classes_.classes(shape);
  l.classes = static_cast<std::int32_t>(cls.size());
  solver_.begin_batch();  // one re-rating for the whole launch
  for (FlowClasses::ClassId c : cls) {
    stats_.flows_started += classes_.size(c);
    ++stats_.classes_started;
    start_class(id, c, classes_.bytes(c) * scale / classes_.weight(c), now);
  }
  solver_.end_batch();
  return id;
}

void ClassFlows::start_class(std::int32_t launch, FlowClasses::ClassId c, double bytes, Time now) {
  classes_.loads(c, loads_links_, loads_);
  const MaxMinFlows::FlowId id = solver_.add(loads_links_, loads_, bytes, now);
  active_.emplace_back(id, Active{launch, c});  // flow ids grow: active_ stays sorted
}

void ClassFlows::rebase(Time now) {
  const auto flow_splits = classes_.take_flow_splits();
  const auto link_splits = classes_.take_link_splits();
  if (flow_splits.empty() && link_splits.empty()) return;
  // Every split link class carried, per link, what its parent did until now.
  solver_.advance_to(now);
  std::vector<char> link_split(static_cast<std::size_t>(classes_.link_classes()), 0);
  for (const auto& [parent, child] : link_splits) {
    const LinkId id = solver_.add_link(classes_.capacity(child));
    if (id != child) throw std::logic_error("link classes and solver links out of step");
    solver_.copy_link_usage(parent, child);
    link_split[static_cast<std::size_t>(parent)] = 1;
    link_split[static_cast<std::size_t>(child)] = 1;
  }
  if (active_.empty()) return;
  // A representative in flight whose class split, or which crosses a split link class, goes back
  // as one per part of its class (the splits in order: a part may have split again), with what
  // it had left; the others keep their place.
  std::map<FlowClasses::ClassId, std::vector<FlowClasses::ClassId>> children;
  for (const auto& [parent, child] : flow_splits) children[parent].push_back(child);
  auto affected = [&](const Active& a) {
    if (children.count(a.cls) != 0) return true;
    classes_.loads(a.cls, loads_links_, loads_);
    return std::any_of(loads_links_.begin(), loads_links_.end(), [&](LinkId lc) {
      return lc < static_cast<LinkId>(link_split.size()) &&
             link_split[static_cast<std::size_t>(lc)];
    });
  };
  std::vector<std::pair<MaxMinFlows::FlowId, Active>> kept, moved;
  for (const auto& entry : active_) (affected(entry.second) ? moved : kept).push_back(entry);
  if (moved.empty()) return;
  active_ = std::move(kept);
  std::vector<double> left;
  for (const auto& [flow, a] : moved) left.push_back(solver_.remaining_bytes(flow));
  solver_.begin_batch();  // taken out and put back with one re-rating
  for (const auto& [flow, a] : moved) solver_.remove(flow, now);
  for (std::size_t k = 0; k < moved.size(); ++k) {
    const Active& a = moved[k].second;
    std::vector<FlowClasses::ClassId> parts{a.cls};
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (auto it = children.find(parts[i]); it != children.end())
        parts.insert(parts.end(), it->second.begin(), it->second.end());
    }
    launches_[static_cast<std::size_t>(a.launch)].classes +=
        static_cast<std::int32_t>(parts.size()) - 1;
    for (FlowClasses::ClassId c : parts) start_class(a.launch, c, left[k], now);
  }
  solver_.end_batch();
}

void ClassFlows::complete_finished(Time now, std::vector<Arrival>& done) {
  solver_.complete_finished(now, finished_);
  for (MaxMinFlows::FlowId id : finished_) {
    auto at = std::lower_bound(active_.begin(), active_.end(), id,
                               [](const auto& a, MaxMinFlows::FlowId v) { return a.first < v; });
    const Active a = at->second;
    active_.erase(at);
    Launch& l = launches_[static_cast<std::size_t>(a.launch)];
    const Time arrival = now + classes_.latency(a.cls) + l.extra;
    for (const FlowClasses::MemberCount& mc : classes_.members(a.cls)) {
      const auto m = static_cast<std::size_t>(mc.member);
      l.last[m] = std::max(l.last[m], arrival);
      l.outstanding[m] -= mc.flows;
      if (l.outstanding[m] == 0) done.push_back(Arrival{a.launch, mc.member, l.last[m]});
    }
    if (--l.classes == 0) free_launches_.push_back(a.launch);
  }
}

std::vector<std::pair<std::int32_t, double>> ClassFlows::in_flight() const {
  std::vector<std::pair<std::int32_t, double>> out;
  for (const auto& [flow, a] : active_)
    out.emplace_back(a.launch, solver_.remaining_bytes(flow) * classes_.weight(a.cls));
  return out;
}

ClassFlows::Stats ClassFlows::stats() const {
  Stats s = stats_;
  s.laid_out = classes_.flow_count();
  s.flow_classes = classes_.flow_classes();
  s.link_classes = classes_.link_classes();
  return s;
}

}  // namespace bubblesim
