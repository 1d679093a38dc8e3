#include "sim/engine/symmetry/collective_launcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "sim/units/diagnostics.h"

namespace bubblesim {

/// One step of one collective, laid out: its flows (member 0; a launch renumbers them), the
/// distinct links they cross (for traces) and the latest arrival of its transfers without a
/// link (they arrive after their latency alone).
struct CollectiveLauncher::Content {
  std::vector<ShapeFlow> flows;
  std::vector<LinkId> links;
  bool lone = false;
  Time lone_latency;
};

/// The collectives of one key: per member its steps as (content, how many times in a row), and
/// the shapes its launches used, by (member, content) of each collective launched together.
struct CollectiveLauncher::Group {
  std::vector<Content> contents;
  std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> steps;
  std::map<std::vector<std::int32_t>, std::int32_t> shapes;
};

namespace {

/// A pipelined step stands for `latencies` barrier steps of 1 / latencies of its bytes when all
/// its transfers agree on that count (collectives.h): the stepped collective without building
/// its steps. 0 when they do not agree.
std::int32_t repeats(const CollectiveStep& step) {
  const std::int32_t k = step.empty() ? 1 : step.front().latencies;
  for (const CollectiveTransfer& t : step)
    if (t.latencies != k) return 0;
  return std::max(k, 1);
}

}  // namespace

CollectiveLauncher::CollectiveLauncher(const CollectivePlanner& planner, FlowPort& port,
                                       ShapePort* shapes, bool keep_slices)
    : planner_(planner),
      topology_(planner.topology()),
      port_(port),
      shapes_(shapes),
      keep_slices_(keep_slices) {}

CollectiveLauncher::~CollectiveLauncher() = default;

const Route& CollectiveLauncher::route(VertexId a, VertexId b) {
  return cached_route(topology_, routes_, a, b);
}

std::int32_t CollectiveLauncher::group_of(std::uint64_t key, CollectiveAlgorithm algorithm,
                                          double layout_bytes) {
  const auto gkey = std::make_pair(key, static_cast<int>(algorithm));
  if (auto it = group_by_key_.find(gkey); it != group_by_key_.end()) return it->second;
  auto g = std::make_unique<Group>();
  // Laid out at these bytes with the launch's algorithm, pipelined, and scaled to one byte (a
  // layout is linear in the bytes).
  const double scale = layout_bytes > 0.0 ? layout_bytes : 1.0;
  const bool cut = planner_.options().ring_steps == RingSteps::Stepped;
  for (const CollectiveSpec& spec : specs_by_key_.at(key)) {
    CollectivePlan plan =
        planner_.plan(spec.ranks, spec.kind, scale, algorithm, RingSteps::Pipelined);
    const std::vector<VertexId>& ends = plan.layout.endpoints;
    std::vector<CollectiveStep> steps = std::move(plan.layout.steps);
    if (cut && !std::all_of(steps.begin(), steps.end(),
                            [](const CollectiveStep& s) { return repeats(s) > 0; }))
      steps = planner_.plan(spec.ranks, spec.kind, scale, algorithm).layout.steps;
    // Steps with the same transfers are one content (a hierarchical all-reduce's gathers are
    // its scatters).
    using Transfer = std::tuple<std::int32_t, std::int32_t, double, std::int32_t>;
    std::map<std::vector<Transfer>, std::int32_t> seen;
    std::vector<std::pair<std::int32_t, std::int32_t>> member_steps;
    for (const CollectiveStep& step : steps) {
      const std::int32_t k = cut ? std::max(repeats(step), 1) : 1;
      std::vector<Transfer> transfers;
      for (const CollectiveTransfer& t : step)
        transfers.emplace_back(t.from, t.to, t.bytes / scale / k, k > 1 ? 1 : t.latencies);
      auto [at, fresh] = seen.try_emplace(transfers, static_cast<std::int32_t>(g->contents.size()));
      if (fresh) {
        Content c;
        for (const auto& [from, to, bytes, latencies] : transfers) {
          const Route& r =
              route(ends[static_cast<std::size_t>(from)], ends[static_cast<std::size_t>(to)]);
          const Time latency = r.latency * latencies;
          if (bytes > 0.0 && !r.links.empty()) {
            c.flows.push_back(ShapeFlow{r.links, bytes, 1.0, latency, 0});
            c.links.insert(c.links.end(), r.links.begin(), r.links.end());
          } else {
            c.lone = true;
            c.lone_latency = std::max(c.lone_latency, latency);
          }
        }
        std::sort(c.links.begin(), c.links.end());
        c.links.erase(std::unique(c.links.begin(), c.links.end()), c.links.end());
        g->contents.push_back(std::move(c));
      }
      if (!member_steps.empty() && member_steps.back().first == at->second)
        member_steps.back().second += k;
      else
        member_steps.emplace_back(at->second, k);
    }
    g->steps.push_back(std::move(member_steps));
  }
  const auto id = static_cast<std::int32_t>(groups_.size());
  groups_.push_back(std::move(g));
  group_by_key_.emplace(gkey, id);
  return id;
}

std::uint32_t CollectiveLauncher::launch(std::uint64_t key, double bytes, Time now,
                                         const Specs& specs, std::vector<std::uint32_t>& done) {
  const auto first = static_cast<std::uint32_t>(state_.size());
  if (!shapes_) {
    // One by one, each planned for these bytes.
    for (const CollectiveSpec& spec : specs()) {
      CollectivePlan plan = planner_.plan(spec.ranks, spec.kind, bytes, spec.algorithm);
      State& st = state_.emplace_back();
      st.start = now;
      st.algorithm = plan_name(plan);
      st.predicted = plan.predicted;
      instances_.push_back(std::make_unique<CollectiveInstance>(
          topology_, std::move(plan.layout.endpoints), std::move(plan.layout.steps), plan.timing));
    }
    for (auto id = first; id < state_.size(); ++id) {
      if (!instances_[id]->start(port_, id, now, routes_)) continue;
      state_[id].end = now;
      instances_[id].reset();
      done.push_back(id);
    }
    return first;
  }
  // The first collective planned for these bytes; the others run its algorithm and timing.
  auto known = specs_by_key_.find(key);
  if (known == specs_by_key_.end()) known = specs_by_key_.emplace(key, specs()).first;
  if (known->second.empty()) return first;
  const CollectiveSpec& lead = known->second.front();
  // Its algorithm and timing only: group_of lays the steps out pipelined and cuts them itself,
  // so a stepped ring too large to lay out step by step still runs by class.
  const CollectivePlan plan =
      planner_.plan(lead.ranks, lead.kind, bytes, lead.algorithm, RingSteps::Pipelined);
  const std::int32_t g = group_of(key, plan.algorithm, bytes);
  std::vector<std::uint32_t> started;
  const auto n = groups_[static_cast<std::size_t>(g)]->steps.size();
  for (std::size_t m = 0; m < n; ++m) {
    const auto id = static_cast<std::uint32_t>(state_.size());
    State& st = state_.emplace_back();
    st.start = now;
    st.group = g;
    st.member = static_cast<std::int32_t>(m);
    st.first = first;
    st.timing = plan.timing;
    st.algorithm = plan_name(plan);
    st.predicted = plan.predicted;
    if (groups_[static_cast<std::size_t>(g)]->steps[m].empty()) {  // one rank: nothing to do
      st.end = now;
      done.push_back(id);
    } else {
      started.push_back(id);
    }
  }
  if (launch_bytes_.size() < state_.size()) launch_bytes_.resize(state_.size(), 0.0);
  launch_bytes_[first] = bytes;
  if (!started.empty()) start_step(started, bytes, now);
  return first;
}

void CollectiveLauncher::start_step(const std::vector<std::uint32_t>& ids, double bytes, Time now) {
  Group& g = *groups_[static_cast<std::size_t>(state_[ids.front()].group)];
  std::vector<std::int32_t> key;
  for (std::uint32_t id : ids) {
    const State& st = state_[id];
    key.push_back(st.member);
    key.push_back(g.steps[static_cast<std::size_t>(st.member)][st.step].first);
  }
  auto [at, fresh] = g.shapes.try_emplace(key, -1);
  bool any_flow = false;
  std::vector<ShapeFlow> flows;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Content& c = g.contents[static_cast<std::size_t>(key[2 * i + 1])];
    any_flow = any_flow || !c.flows.empty();
    if (!fresh) continue;
    for (ShapeFlow f : c.flows) {
      f.member = static_cast<std::int32_t>(i);
      flows.push_back(std::move(f));
    }
  }
  if (fresh && any_flow)
    at->second = shapes_->add_shape(flows, static_cast<std::int32_t>(ids.size()), now);
  if (token_owner_.size() + ids.size() >= kStepBit) {
    throw InputError(fmt::format(
        "the collectives launched more than {} steps (kStepBit in "
        "sim/engine/symmetry/collective_launcher.h): use fewer buckets (data_parallel.bucket) "
        "or pipelined ring steps",
        kStepBit));
  }
  const auto first_token = static_cast<std::uint32_t>(token_owner_.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    State& st = state_[ids[i]];
    const Content& c = g.contents[static_cast<std::size_t>(key[2 * i + 1])];
    token_owner_.push_back(ids[i]);
    st.step_start = now;
    st.waiting = (c.flows.empty() ? 0 : 1) + (c.lone ? 1 : 0);
    if (c.lone) port_.add_timer(now + c.lone_latency, first_token + static_cast<std::uint32_t>(i));
  }
  if (any_flow) shapes_->launch(at->second, bytes, first_token, now);
  for (std::uint32_t id : ids) {  // NCCL's bandwidth: the first step ends no sooner than its floor
    State& st = state_[id];
    if (!st.timing || st.step != 0 || st.repeat != 0) continue;
    ++st.waiting;
    add_timer(id, now + st.timing->floor);
  }
}

void CollectiveLauncher::add_timer(std::uint32_t id, Time at) {
  if (token_owner_.size() + 1 >= kStepBit) {
    throw InputError(fmt::format(
        "the collectives launched more than {} steps (kStepBit in "
        "sim/engine/symmetry/collective_launcher.h): use fewer buckets (data_parallel.bucket)",
        kStepBit));
  }
  const auto token = static_cast<std::uint32_t>(token_owner_.size());
  token_owner_.push_back(id);
  port_.add_timer(at, token);
}

void CollectiveLauncher::on_token(std::uint32_t token, Time now, std::vector<std::uint32_t>& done) {
  if (token >= kStepBit) {  // collectives that finished a step now start the next together
    step_timer_ = false;
    std::vector<std::uint32_t> waiting;
    waiting.swap(next_step_);
    while (!waiting.empty()) {
      const std::uint32_t first = state_[waiting.front()].first;
      std::vector<std::uint32_t> together, rest;
      for (std::uint32_t id : waiting) (state_[id].first == first ? together : rest).push_back(id);
      start_step(together, launch_bytes_[first], now);
      waiting.swap(rest);
    }
    return;
  }
  if (!shapes_) {
    CollectiveInstance& c = *instances_[token];
    if (!c.on_arrival(port_, token, now, routes_)) return;
    State& st = state_[token];
    st.end = now;
    if (keep_slices_) st.slices = c.link_slices();
    instances_[token].reset();
    done.push_back(token);
    return;
  }
  const std::uint32_t id = token_owner_[token];
  if (--state_[id].waiting > 0) return;
  step_done(id, now, done);
}

void CollectiveLauncher::step_done(std::uint32_t id, Time now, std::vector<std::uint32_t>& done) {
  State& st = state_[id];
  const Group& g = *groups_[static_cast<std::size_t>(st.group)];
  const auto& steps = g.steps[static_cast<std::size_t>(st.member)];
  if (st.in_latency) {  // NCCL's latency after the last byte has run
    st.end = now;
    done.push_back(id);
    return;
  }
  if (keep_slices_) {
    for (LinkId l : g.contents[static_cast<std::size_t>(steps[st.step].first)].links)
      st.slices.push_back(CollectiveLinkSlice{l, st.step_start, now});
  }
  if (++st.repeat == steps[st.step].second) {
    ++st.step;
    st.repeat = 0;
  }
  if (st.step == steps.size()) {
    if (st.timing && st.timing->latency > Time::zero()) {
      st.in_latency = true;
      st.waiting = 1;
      add_timer(id, now + st.timing->latency);
      return;
    }
    st.end = now;
    done.push_back(id);
    return;
  }
  next_step_.push_back(id);
  if (!step_timer_) {
    step_timer_ = true;
    port_.add_timer(now, kStepBit);
  }
}

}  // namespace bubblesim
