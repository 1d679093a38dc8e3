#include "sim/engine/max_min_flows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "sim/units/overflow_error.h"

namespace bubblesim {
namespace {

constexpr double kPsPerSecond = 1e12;

bool valid_capacity(double c) { return c >= 0.0 && std::isfinite(c); }

}  // namespace

MaxMinFlows::MaxMinFlows(std::vector<double> link_capacity_bytes_per_s) {
  links_.resize(link_capacity_bytes_per_s.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (!valid_capacity(link_capacity_bytes_per_s[i])) {
      throw std::invalid_argument(
          fmt::format("link {} has an invalid capacity {} (must be finite and >= 0)", i,
                      link_capacity_bytes_per_s[i]));
    }
    links_[i].capacity = link_capacity_bytes_per_s[i];
  }
}

MaxMinFlows MaxMinFlows::for_topology(const Topology& topology) {
  std::vector<double> capacity;
  capacity.reserve(static_cast<std::size_t>(topology.link_count()));
  for (LinkId l = 0; l < topology.link_count(); ++l)
    capacity.push_back(topology.link_bandwidth(l).bytes_per_second());
  return MaxMinFlows(std::move(capacity));
}

void MaxMinFlows::check_link(LinkId l) const {
  if (l < 0 || l >= static_cast<LinkId>(links_.size())) {
    throw std::invalid_argument(
        fmt::format("link id {} is out of range (the network has {} links)", l, links_.size()));
  }
}

const MaxMinFlows::Flow& MaxMinFlows::flow(FlowId id) const {
  std::int32_t slot = find_slot(id);
  if (slot < 0) throw std::out_of_range(fmt::format("flow {} is not active", id));
  return flows_[static_cast<std::size_t>(slot)];
}

MaxMinFlows::FlowId MaxMinFlows::add(const std::vector<LinkId>& links, double bytes, Time now,
                                     double weight) {
  if (!(weight > 0.0) || !std::isfinite(weight))
    throw std::invalid_argument(fmt::format("a flow's weight must be positive (got {})", weight));
  return insert(links, nullptr, bytes, now, weight);
}

MaxMinFlows::FlowId MaxMinFlows::add(const std::vector<LinkId>& links,
                                     const std::vector<double>& multiplicity, double bytes,
                                     Time now) {
  if (multiplicity.size() != links.size())
    throw std::invalid_argument("a flow needs one multiplicity per link");
  for (double m : multiplicity) {
    if (!(m > 0.0) || !std::isfinite(m))
      throw std::invalid_argument(fmt::format("a link multiplicity must be positive (got {})", m));
  }
  return insert(links, &multiplicity, bytes, now, 1.0);
}

MaxMinFlows::FlowId MaxMinFlows::insert(const std::vector<LinkId>& links,
                                        const std::vector<double>* multiplicity, double bytes,
                                        Time now, double weight) {
  if (links.empty()) throw std::invalid_argument("a flow needs at least one link");
  if (!(bytes > 0.0) || !std::isfinite(bytes)) {
    throw std::invalid_argument(
        fmt::format("a flow must carry a positive, finite number of bytes (got {})", bytes));
  }
  for (LinkId l : links) check_link(l);
  // Routes are short: a pairwise check allocates nothing.
  for (std::size_t i = 0; i < links.size(); ++i) {
    for (std::size_t k = i + 1; k < links.size(); ++k) {
      if (links[i] == links[k])
        throw std::invalid_argument("a flow must not cross the same link twice");
    }
  }
  if (next_id_ == std::numeric_limits<FlowId>::max()) throw std::overflow_error("too many flows");

  advance(now);
  FlowId id = next_id_++;
  Flow f;
  f.id = id;
  if (!spare_links_.empty()) {
    f.links = std::move(spare_links_.back());
    spare_links_.pop_back();
  }
  f.links.assign(links.begin(), links.end());
  if (multiplicity != nullptr) f.multiplicity = *multiplicity;
  f.total = bytes;
  f.remaining = bytes;
  f.weight = weight;
  slot_of_.push_back(static_cast<std::int32_t>(flows_.size()));  // ids are dense: slot_of_[id]
  flows_.push_back(std::move(f));
  for (LinkId l : links) links_[l].flows.push_back(id);  // ids grow, so the lists stay sorted
  if (batching_) {
    batch_links_.insert(batch_links_.end(), links.begin(), links.end());
  } else {
    recompute(links);
  }
  return id;
}

void MaxMinFlows::end_batch() {
  batching_ = false;
  if (batch_links_.empty()) return;
  std::sort(batch_links_.begin(), batch_links_.end());
  batch_links_.erase(std::unique(batch_links_.begin(), batch_links_.end()), batch_links_.end());
  recompute(batch_links_);
  batch_links_.clear();
}

double MaxMinFlows::Flow::load_on(LinkId l) const {
  if (multiplicity.empty()) return 1.0;
  for (std::size_t i = 0; i < links.size(); ++i)
    if (links[i] == l) return multiplicity[i];
  return 1.0;
}

void MaxMinFlows::remove(FlowId id, Time now) {
  const std::int32_t slot = find_slot(id);
  if (slot < 0) throw std::out_of_range(fmt::format("flow {} is not active", id));
  advance(now);
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  touched_.assign(f.links.begin(), f.links.end());
  for (LinkId l : f.links) {
    auto& on_link = links_[l].flows;
    on_link.erase(std::lower_bound(on_link.begin(), on_link.end(), id));
  }
  spare_links_.push_back(std::move(f.links));
  flows_.erase(flows_.begin() + slot);
  slot_of_[static_cast<std::size_t>(id)] = -1;
  for (std::size_t i = static_cast<std::size_t>(slot); i < flows_.size(); ++i)
    slot_of_[static_cast<std::size_t>(flows_[i].id)] = static_cast<std::int32_t>(i);
  if (batching_) {
    batch_links_.insert(batch_links_.end(), touched_.begin(), touched_.end());
  } else {
    recompute(touched_);
  }
}

LinkId MaxMinFlows::add_link(double capacity) {
  if (!valid_capacity(capacity)) {
    throw std::invalid_argument(
        fmt::format("a link capacity must be finite and >= 0 (got {})", capacity));
  }
  if (links_.size() >= static_cast<std::size_t>(std::numeric_limits<LinkId>::max()))
    throw std::overflow_error("too many links");
  links_.emplace_back();
  links_.back().capacity = capacity;
  return static_cast<LinkId>(links_.size() - 1);
}

void MaxMinFlows::copy_link_usage(LinkId from, LinkId to) {
  check_link(from);
  check_link(to);
  links_[to].busy += links_[from].busy;
  links_[to].bytes += links_[from].bytes;
}

std::vector<MaxMinFlows::FlowId> MaxMinFlows::complete_finished(Time now) {
  std::vector<FlowId> done;
  complete_finished(now, done);
  return done;
}

void MaxMinFlows::complete_finished(Time now, std::vector<FlowId>& done) {
  done.clear();
  advance(now);
  touched_.clear();
  // Finished flows leave; the rest move down, keeping id order.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    if (f.finish > now_) {
      if (kept != i) {
        slot_of_[static_cast<std::size_t>(f.id)] = static_cast<std::int32_t>(kept);
        std::swap(flows_[kept], f);
      }
      ++kept;
      continue;
    }
    done.push_back(f.id);
    for (std::size_t k = 0; k < f.links.size(); ++k) {
      const LinkId l = f.links[k];
      // Rounding left a sliver unaccounted; the whole flow did cross the link.
      links_[l].bytes += f.remaining * f.load(k);
      auto& on_link = links_[l].flows;
      on_link.erase(std::lower_bound(on_link.begin(), on_link.end(), f.id));
      touched_.push_back(l);
    }
    slot_of_[static_cast<std::size_t>(f.id)] = -1;
  }
  for (std::size_t i = kept; i < flows_.size(); ++i)
    spare_links_.push_back(std::move(flows_[i].links));
  flows_.resize(kept);
  if (!touched_.empty()) recompute(touched_);
}

std::optional<Time> MaxMinFlows::next_completion() const {
  const std::greater<> later;
  while (!finish_heap_.empty()) {
    const auto [at, id] = finish_heap_.front();
    const std::int32_t slot = find_slot(id);
    if (slot >= 0 && flows_[static_cast<std::size_t>(slot)].finish == at) return at;
    std::pop_heap(finish_heap_.begin(), finish_heap_.end(), later);  // stale
    finish_heap_.pop_back();
  }
  return std::nullopt;
}

void MaxMinFlows::note_finish(const Flow& f) {
  const std::greater<> later;
  if (finish_heap_.size() > 4 * flows_.size() + 1024) {  // mostly stale: rebuild
    finish_heap_.clear();
    for (const Flow& g : flows_) {
      if (g.finish != Time::max()) finish_heap_.emplace_back(g.finish, g.id);
    }
    std::make_heap(finish_heap_.begin(), finish_heap_.end(), later);
    return;  // `f` is in flows_ with its new finish already
  }
  if (f.finish == Time::max()) return;
  finish_heap_.emplace_back(f.finish, f.id);
  std::push_heap(finish_heap_.begin(), finish_heap_.end(), later);
}

double MaxMinFlows::rate(FlowId id) const { return flow(id).rate; }
double MaxMinFlows::remaining_bytes(FlowId id) const { return flow(id).remaining; }

Time MaxMinFlows::link_busy_time(LinkId l) const {
  check_link(l);
  return links_[l].busy;
}

double MaxMinFlows::link_bytes(LinkId l) const {
  check_link(l);
  return links_[l].bytes;
}

double MaxMinFlows::link_capacity(LinkId l) const {
  check_link(l);
  return links_[l].capacity;
}

void MaxMinFlows::set_link_capacity(LinkId l, double capacity, Time now) {
  check_link(l);
  if (!valid_capacity(capacity)) {
    throw std::invalid_argument(
        fmt::format("link {} capacity {} is invalid (must be finite and >= 0)", l, capacity));
  }
  advance(now);
  links_[l].capacity = capacity;
  recompute({l});
}

void MaxMinFlows::advance(Time now) {
  if (now < now_) {
    throw std::logic_error(fmt::format("flow network time goes back from {} to {}", now_, now));
  }
  if (now == now_) return;
  // A link is busy from now_ until the last of its moving flows stops (flows all start at now_).
  if (advance_scratch_.busy_end.size() != links_.size())
    advance_scratch_.busy_end.assign(links_.size(), Time::zero());
  advance_scratch_.busy_links.clear();
  for (Flow& f : flows_) {
    if (f.rate <= 0.0) continue;
    Time end = std::min(now, f.finish);
    if (end <= now_) continue;
    double moved =
        std::min(f.remaining, f.rate * static_cast<double>((end - now_).ps()) / kPsPerSecond);
    f.remaining -= moved;
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      const LinkId l = f.links[i];
      links_[l].bytes += moved * f.load(i);
      Time& until = advance_scratch_.busy_end[static_cast<std::size_t>(l)];
      if (until == Time::zero())
        advance_scratch_.busy_links.push_back(l);  // end > now_ >= 0: zero means unset
      if (end > until) until = end;
    }
  }
  for (LinkId l : advance_scratch_.busy_links) {
    Time& until = advance_scratch_.busy_end[static_cast<std::size_t>(l)];
    links_[l].busy += until - now_;
    until = Time::zero();
  }
  now_ = now;
}

Time MaxMinFlows::predict_finish(const Flow& f) const {
  return finish_time(f.remaining, f.rate, now_);
}

Time MaxMinFlows::finish_time(double bytes, double rate, Time now) {
  if (rate <= 0.0) return Time::max();
  double ps = bytes / rate * kPsPerSecond;
  // Durations computed in floating point land a hair above an exact integer; snap those down
  // (by well under a picosecond) before rounding up so that exact inputs give exact times.
  double slack = std::min(0.5, std::max(1e-6, ps * 1e-13));
  double whole = std::ceil(ps - slack);
  if (whole < 0.0) whole = 0.0;
  double limit = static_cast<double>(Time::max().ps() - now.ps());
  // A flow that moves but ends beyond the representable time is not a cut link (Time::max()
  // means "never"): 10 MB at 1 B/s was reported as a deadlock.
  if (!(whole < limit)) {
    throw OverflowError(fmt::format(
        "a transfer of {:.6g} bytes at {:.6g} bytes/s ends after the largest simulated time", bytes,
        rate));
  }
  return now + Time::from_ps(static_cast<std::int64_t>(whole));
}

void MaxMinFlows::recompute(const std::vector<LinkId>& seed_links) {
  // The connected component of flows sharing links with the seeds, transitively.
  if (recompute_scratch_.link_seen.size() != links_.size()) {
    recompute_scratch_.link_seen.assign(links_.size(), 0);
    recompute_scratch_.cap.assign(links_.size(), 0.0);
    recompute_scratch_.unfrozen.assign(links_.size(), 0);
    recompute_scratch_.unfrozen_weight.assign(links_.size(), 0.0);
  }
  if (recompute_scratch_.frozen.size() < flows_.size()) {
    recompute_scratch_.frozen.resize(flows_.size(), 0);
    recompute_scratch_.new_rate.resize(flows_.size(), 0.0);
  }
  recompute_scratch_.comp_links.clear();
  recompute_scratch_.comp_flows.clear();
  recompute_scratch_.queue.clear();
  for (LinkId l : seed_links) {
    if (!recompute_scratch_.link_seen[static_cast<std::size_t>(l)]) {
      recompute_scratch_.link_seen[static_cast<std::size_t>(l)] = 1;
      recompute_scratch_.queue.push_back(l);
    }
  }
  // recompute_scratch_.frozen marks component flows: 1 = found (rate not fixed yet), 2 = rate
  // fixed.
  while (!recompute_scratch_.queue.empty()) {
    LinkId l = recompute_scratch_.queue.back();
    recompute_scratch_.queue.pop_back();
    recompute_scratch_.comp_links.push_back(l);
    for (FlowId id : links_[l].flows) {
      const std::int32_t slot = slot_of_[static_cast<std::size_t>(id)];
      char& mark = recompute_scratch_.frozen[static_cast<std::size_t>(slot)];
      if (mark != 0) continue;
      mark = 1;
      recompute_scratch_.comp_flows.push_back(slot);
      for (LinkId l2 : flows_[static_cast<std::size_t>(slot)].links) {
        if (!recompute_scratch_.link_seen[static_cast<std::size_t>(l2)]) {
          recompute_scratch_.link_seen[static_cast<std::size_t>(l2)] = 1;
          recompute_scratch_.queue.push_back(l2);
        }
      }
    }
  }
  for (LinkId l : recompute_scratch_.comp_links)
    recompute_scratch_.link_seen[static_cast<std::size_t>(l)] = 0;
  if (recompute_scratch_.comp_flows.empty()) return;
  std::sort(recompute_scratch_.comp_links.begin(), recompute_scratch_.comp_links.end());

  // Progressive filling: the link with the smallest fair share (lowest id on ties) saturates
  // first; its flows get that share, which is taken out of every other link they cross.
  for (LinkId l : recompute_scratch_.comp_links) {
    recompute_scratch_.cap[static_cast<std::size_t>(l)] = links_[l].capacity;
    recompute_scratch_.unfrozen[static_cast<std::size_t>(l)] =
        static_cast<std::int32_t>(links_[l].flows.size());
    double weight = 0.0;
    for (FlowId id : links_[l].flows) {
      const Flow& f = flows_[static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(id)])];
      weight += f.weight * f.load_on(l);
    }
    recompute_scratch_.unfrozen_weight[static_cast<std::size_t>(l)] = weight;
  }
  std::size_t left = recompute_scratch_.comp_flows.size();
  while (left > 0) {
    LinkId best = -1;
    double best_share = 0.0;
    for (LinkId l : recompute_scratch_.comp_links) {
      if (recompute_scratch_.unfrozen[static_cast<std::size_t>(l)] == 0) continue;
      // The fair share of one unit of weight (of one plain flow).
      double share = recompute_scratch_.cap[static_cast<std::size_t>(l)] /
                     recompute_scratch_.unfrozen_weight[static_cast<std::size_t>(l)];
      if (best < 0 || share < best_share) {
        best = l;
        best_share = share;
      }
    }
    if (best < 0) break;  // cannot happen: every flow crosses a link
    for (FlowId id : links_[best].flows) {
      const auto slot = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(id)]);
      if (recompute_scratch_.frozen[slot] == 2) continue;
      recompute_scratch_.frozen[slot] = 2;
      --left;
      const Flow& f = flows_[slot];
      const double weight = f.weight;
      const double rate = best_share * weight;
      recompute_scratch_.new_rate[slot] = rate;
      for (std::size_t i = 0; i < f.links.size(); ++i) {
        const auto l = static_cast<std::size_t>(f.links[i]);
        const double load = f.load(i);
        double& c = recompute_scratch_.cap[l];
        c = std::max(0.0, c - rate * load);
        --recompute_scratch_.unfrozen[l];
        recompute_scratch_.unfrozen_weight[l] -= weight * load;
      }
    }
  }
  for (std::int32_t s : recompute_scratch_.comp_flows) {
    const auto slot = static_cast<std::size_t>(s);
    const bool fixed = recompute_scratch_.frozen[slot] == 2;
    recompute_scratch_.frozen[slot] = 0;
    if (!fixed) continue;
    Flow& f = flows_[slot];
    const double r = recompute_scratch_.new_rate[slot];
    // An unchanged rate keeps its prediction, so repeated recomputes cannot drift it.
    if (r == f.rate && f.finish != Time::max()) continue;
    f.rate = r;
    f.finish = predict_finish(f);
    note_finish(f);
  }
}

}  // namespace bubblesim
