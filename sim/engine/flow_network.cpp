#include "sim/engine/flow_network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace bubblesim {
namespace {

constexpr double kPsPerSecond = 1e12;

bool valid_capacity(double c) { return c >= 0.0 && std::isfinite(c); }

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> link_capacity_bytes_per_s) {
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

FlowNetwork FlowNetwork::for_topology(const Topology& topology) {
  std::vector<double> capacity;
  capacity.reserve(static_cast<std::size_t>(topology.link_count()));
  for (LinkId l = 0; l < topology.link_count(); ++l)
    capacity.push_back(topology.link_bandwidth(l).bytes_per_second());
  return FlowNetwork(std::move(capacity));
}

void FlowNetwork::check_link(LinkId l) const {
  if (l < 0 || l >= static_cast<LinkId>(links_.size())) {
    throw std::invalid_argument(
        fmt::format("link id {} is out of range (the network has {} links)", l, links_.size()));
  }
}

const FlowNetwork::Flow& FlowNetwork::flow(FlowId id) const {
  auto it = flows_.find(id);
  if (it == flows_.end()) throw std::out_of_range(fmt::format("flow {} is not active", id));
  return it->second;
}

FlowNetwork::FlowId FlowNetwork::add(const std::vector<LinkId>& links, double bytes, Time now) {
  if (links.empty()) throw std::invalid_argument("a flow needs at least one link");
  if (!(bytes > 0.0) || !std::isfinite(bytes)) {
    throw std::invalid_argument(
        fmt::format("a flow must carry a positive, finite number of bytes (got {})", bytes));
  }
  for (LinkId l : links) check_link(l);
  std::vector<LinkId> sorted = links;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("a flow must not cross the same link twice");
  }
  if (next_id_ == std::numeric_limits<FlowId>::max()) throw std::overflow_error("too many flows");

  advance(now);
  FlowId id = next_id_++;
  Flow f;
  f.links = links;
  f.total = bytes;
  f.remaining = bytes;
  flows_.emplace(id, std::move(f));
  for (LinkId l : links) links_[l].flows.push_back(id);  // ids grow, so the lists stay sorted
  recompute(links);
  return id;
}

std::vector<FlowNetwork::FlowId> FlowNetwork::complete_finished(Time now) {
  advance(now);
  std::vector<FlowId> done;
  std::vector<LinkId> touched;
  for (auto it = flows_.begin(); it != flows_.end();) {
    Flow& f = it->second;
    if (f.finish > now_) {
      ++it;
      continue;
    }
    done.push_back(it->first);
    for (LinkId l : f.links) {
      // Rounding left a sliver unaccounted; the whole flow did cross the link.
      links_[l].bytes += f.remaining;
      auto& on_link = links_[l].flows;
      on_link.erase(std::lower_bound(on_link.begin(), on_link.end(), it->first));
      touched.push_back(l);
    }
    it = flows_.erase(it);
  }
  if (!touched.empty()) recompute(touched);
  return done;
}

std::optional<Time> FlowNetwork::next_completion() const {
  std::optional<Time> best;
  for (const auto& [id, f] : flows_) {
    if (f.finish == Time::max()) continue;
    if (!best || f.finish < *best) best = f.finish;
  }
  return best;
}

double FlowNetwork::rate(FlowId id) const { return flow(id).rate; }
double FlowNetwork::remaining_bytes(FlowId id) const { return flow(id).remaining; }

Time FlowNetwork::link_busy_time(LinkId l) const {
  check_link(l);
  return links_[l].busy;
}

double FlowNetwork::link_bytes(LinkId l) const {
  check_link(l);
  return links_[l].bytes;
}

double FlowNetwork::link_capacity(LinkId l) const {
  check_link(l);
  return links_[l].capacity;
}

void FlowNetwork::set_link_capacity(LinkId l, double capacity, Time now) {
  check_link(l);
  if (!valid_capacity(capacity)) {
    throw std::invalid_argument(
        fmt::format("link {} capacity {} is invalid (must be finite and >= 0)", l, capacity));
  }
  advance(now);
  links_[l].capacity = capacity;
  recompute({l});
}

void FlowNetwork::advance(Time now) {
  if (now < now_) {
    throw std::logic_error(fmt::format("flow network time goes back from {} to {}", now_, now));
  }
  if (now == now_) return;
  // A link is busy from now_ until the last of its moving flows stops (flows all start at now_).
  std::vector<std::pair<LinkId, Time>> busy_until;
  for (auto& [id, f] : flows_) {
    if (f.rate <= 0.0) continue;
    Time end = std::min(now, f.finish);
    if (end <= now_) continue;
    double moved =
        std::min(f.remaining, f.rate * static_cast<double>((end - now_).ps()) / kPsPerSecond);
    f.remaining -= moved;
    for (LinkId l : f.links) {
      links_[l].bytes += moved;
      busy_until.emplace_back(l, end);
    }
  }
  std::sort(busy_until.begin(), busy_until.end());
  for (std::size_t i = 0; i < busy_until.size(); ++i) {
    // Sorted by (link, end): the last entry of each link has its latest end.
    if (i + 1 < busy_until.size() && busy_until[i + 1].first == busy_until[i].first) continue;
    links_[busy_until[i].first].busy += busy_until[i].second - now_;
  }
  now_ = now;
}

Time FlowNetwork::predict_finish(const Flow& f) const {
  if (f.rate <= 0.0) return Time::max();
  double ps = f.remaining / f.rate * kPsPerSecond;
  // Durations computed in floating point land a hair above an exact integer; snap those down
  // (by well under a picosecond) before rounding up so that exact inputs give exact times.
  double slack = std::min(0.5, std::max(1e-6, ps * 1e-13));
  double whole = std::ceil(ps - slack);
  if (whole < 0.0) whole = 0.0;
  double limit = static_cast<double>(Time::max().ps() - now_.ps());
  if (!(whole < limit)) return Time::max();
  return now_ + Time::from_ps(static_cast<std::int64_t>(whole));
}

void FlowNetwork::recompute(const std::vector<LinkId>& seed_links) {
  // The connected component of flows sharing links with the seeds, transitively.
  std::vector<char> link_seen(links_.size(), 0);
  std::vector<LinkId> comp_links;
  std::vector<FlowId> comp_flows;
  std::vector<LinkId> queue;
  for (LinkId l : seed_links) {
    if (!link_seen[l]) {
      link_seen[l] = 1;
      queue.push_back(l);
    }
  }
  std::map<FlowId, bool> frozen;  // component flows -> rate fixed yet
  while (!queue.empty()) {
    LinkId l = queue.back();
    queue.pop_back();
    comp_links.push_back(l);
    for (FlowId id : links_[l].flows) {
      if (!frozen.emplace(id, false).second) continue;
      for (LinkId l2 : flows_.at(id).links) {
        if (!link_seen[l2]) {
          link_seen[l2] = 1;
          queue.push_back(l2);
        }
      }
    }
  }
  if (frozen.empty()) return;
  std::sort(comp_links.begin(), comp_links.end());

  // Progressive filling: the link with the smallest fair share (lowest id on ties) saturates
  // first; its flows get that share, which is taken out of every other link they cross.
  std::vector<double> cap(links_.size(), 0.0);
  std::vector<std::int32_t> unfrozen(links_.size(), 0);
  for (LinkId l : comp_links) {
    cap[l] = links_[l].capacity;
    unfrozen[l] = static_cast<std::int32_t>(links_[l].flows.size());
  }
  std::map<FlowId, double> new_rate;
  std::size_t left = frozen.size();
  while (left > 0) {
    LinkId best = -1;
    double best_share = 0.0;
    for (LinkId l : comp_links) {
      if (unfrozen[l] == 0) continue;
      double share = cap[l] / unfrozen[l];
      if (best < 0 || share < best_share) {
        best = l;
        best_share = share;
      }
    }
    if (best < 0) break;  // cannot happen: every flow crosses a link
    for (FlowId id : links_[best].flows) {
      bool& is_frozen = frozen.at(id);
      if (is_frozen) continue;
      is_frozen = true;
      --left;
      new_rate[id] = best_share;
      for (LinkId l : flows_.at(id).links) {
        cap[l] = std::max(0.0, cap[l] - best_share);
        --unfrozen[l];
      }
    }
  }
  for (const auto& [id, r] : new_rate) {
    Flow& f = flows_.at(id);
    // An unchanged rate keeps its prediction, so repeated recomputes cannot drift it.
    if (r == f.rate && f.finish != Time::max()) continue;
    f.rate = r;
    f.finish = predict_finish(f);
  }
}

}  // namespace bubblesim
