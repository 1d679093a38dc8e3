// Flows solved by class (sim/engine/symmetry/) against flows solved one by one. Random networks
// built from replicas of one pattern (each replica its own copies of the pattern's links, all of
// them sharing a few hub links), shapes that start the same flow in every replica, or in some
// replicas only, or one flow alone, launched at random times with random bytes while others are
// in flight (so classes in flight are split): every member of every launch must arrive when it
// does with every flow on its own MaxMinFlows, and the classes must be an equitable partition.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "sim/engine/collectives.h"
#include "sim/engine/max_min_flows.h"
#include "sim/engine/symmetry/class_flows.h"
#include "sim/engine/symmetry/flow_classes.h"

using namespace bubblesim;

namespace {

struct Network {
  std::vector<double> capacity;
  std::vector<std::vector<ShapeFlow>> shapes;  // members numbered within each shape
};

/// `replicas` copies of a pattern of `pattern` links plus `hubs` shared links; shapes of flows
/// over a few pattern links (and maybe a hub) in all, some or one of the replicas.
Network random_network(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(1, 3);
  const int replicas = 2 + static_cast<int>(rng() % 7);
  const int pattern = 3 + static_cast<int>(rng() % 6);
  const int hubs = static_cast<int>(rng() % 3);
  Network n;
  std::vector<double> base(static_cast<std::size_t>(pattern));
  for (double& c : base) c = 1e9 * small(rng);
  for (int r = 0; r < replicas; ++r) n.capacity.insert(n.capacity.end(), base.begin(), base.end());
  const auto hub0 = static_cast<LinkId>(n.capacity.size());
  for (int h = 0; h < hubs; ++h) n.capacity.push_back(1e9 * small(rng) * replicas / 2.0);
  const int shapes = 2 + static_cast<int>(rng() % 6);
  for (int s = 0; s < shapes; ++s) {
    // One flow of the pattern: distinct pattern links, maybe a hub.
    std::vector<LinkId> links;
    const int length = 1 + static_cast<int>(rng() % 3);
    while (static_cast<int>(links.size()) < length) {
      const auto l = static_cast<LinkId>(rng() % static_cast<unsigned>(pattern));
      if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
    }
    const bool hub = hubs > 0 && rng() % 2 == 0;
    const LinkId h = hub0 + static_cast<LinkId>(rng() % static_cast<unsigned>(std::max(hubs, 1)));
    // In which replicas: all of them, every other one, or the first alone.
    const int kind = static_cast<int>(rng() % 3);
    std::vector<ShapeFlow> flows;
    const double bytes = 1e6 * small(rng);
    const double weight = rng() % 4 == 0 ? 2.0 : 1.0;
    const Time latency = Time::from_ps(static_cast<std::int64_t>(rng() % 3) * 1'000'000);
    const int members = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < replicas; ++r) {
      if (kind == 1 && r % 2 == 1) continue;
      if (kind == 2 && r > 0) continue;
      ShapeFlow f;
      for (LinkId l : links) f.links.push_back(l + r * pattern);
      if (hub) f.links.push_back(h);
      f.bytes = bytes;
      f.weight = weight;
      f.latency = latency;
      f.member = r % members;
      flows.push_back(f);
    }
    n.shapes.push_back(flows);
  }
  return n;
}

std::int32_t members_of(const std::vector<ShapeFlow>& flows) {
  std::int32_t m = 0;
  for (const ShapeFlow& f : flows) m = std::max(m, f.member + 1);
  return m;
}

// Every link of a link class is crossed by the same number of members of each flow class
// (weights counted), which is the representative's multiplicity there, and every flow of a
// class crosses the same multiset of link classes: brute force over every flow and link.
void check_equitable(const FlowClasses& fc, const std::vector<std::vector<ShapeFlow>>& shapes) {
  std::map<std::pair<LinkId, FlowClasses::ClassId>, double> count;  // (link, flow class)
  std::map<FlowClasses::ClassId, std::set<std::vector<FlowClasses::LinkClassId>>> signatures;
  std::int32_t f = 0;
  for (const auto& shape : shapes) {
    for (const ShapeFlow& flow : shape) {
      const FlowClasses::ClassId c = fc.class_of_flow(f++);
      std::vector<FlowClasses::LinkClassId> signature;
      for (LinkId l : flow.links) {
        count[{l, c}] += flow.weight;
        signature.push_back(fc.link_class(l));
      }
      std::sort(signature.begin(), signature.end());
      signatures[c].insert(signature);
    }
  }
  for (const auto& [c, s] : signatures) CHECK(s.size() == 1);
  for (FlowClasses::ClassId c = 0; c < fc.flow_classes(); ++c) {
    std::vector<FlowClasses::LinkClassId> lcs;
    std::vector<double> mult;
    fc.loads(c, lcs, mult);
    for (std::size_t i = 0; i < lcs.size(); ++i) {
      for (LinkId l : fc.links(lcs[i])) {
        auto it = count.find({l, c});
        CHECK((it == count.end() ? 0.0 : it->second) == mult[i]);
      }
    }
  }
}

/// Arrival of every launch member, flows one by one: each flow on a plain MaxMinFlows.
struct Launch {
  std::int32_t shape = 0;
  double scale = 1;
  Time at;
};

std::vector<std::vector<Time>> one_by_one(const Network& n, const std::vector<Launch>& launches) {
  MaxMinFlows flows(n.capacity);
  std::vector<std::vector<Time>> arrival(launches.size());
  std::vector<std::vector<std::int32_t>> left(launches.size());
  std::map<MaxMinFlows::FlowId, std::pair<std::size_t, std::size_t>> owner;  // launch, flow
  std::size_t next = 0;
  std::vector<MaxMinFlows::FlowId> done;
  while (true) {
    const std::optional<Time> finish = flows.next_completion();
    const bool launch_first = next < launches.size() && (!finish || launches[next].at <= *finish);
    if (launch_first) {
      const Launch& l = launches[next];
      const auto& shape = n.shapes[static_cast<std::size_t>(l.shape)];
      arrival[next].assign(static_cast<std::size_t>(members_of(shape)), Time::zero());
      left[next].assign(arrival[next].size(), 0);
      for (std::size_t f = 0; f < shape.size(); ++f) {
        ++left[next][static_cast<std::size_t>(shape[f].member)];
        owner[flows.add(shape[f].links, shape[f].bytes * l.scale, l.at, shape[f].weight)] = {next,
                                                                                             f};
      }
      ++next;
      continue;
    }
    if (!finish) break;
    flows.complete_finished(*finish, done);
    for (MaxMinFlows::FlowId id : done) {
      const auto [li, f] = owner.at(id);
      const ShapeFlow& sf = n.shapes[static_cast<std::size_t>(launches[li].shape)][f];
      Time& a = arrival[li][static_cast<std::size_t>(sf.member)];
      a = std::max(a, *finish + sf.latency);
    }
  }
  return arrival;
}

std::vector<std::vector<Time>> by_class(const Network& n, const std::vector<Launch>& launches,
                                        ClassFlows::Stats& stats) {
  ClassFlows flows(n.capacity);
  std::vector<std::int32_t> shape_id(n.shapes.size(), -1);
  std::vector<std::vector<Time>> arrival(launches.size());
  std::map<std::int32_t, std::size_t> launch_of;  // ClassFlows launch -> index
  std::size_t next = 0;
  std::vector<ClassFlows::Arrival> done;
  while (true) {
    const std::optional<Time> finish = flows.next_completion();
    const bool launch_first = next < launches.size() && (!finish || launches[next].at <= *finish);
    if (launch_first) {
      const Launch& l = launches[next];
      const auto s = static_cast<std::size_t>(l.shape);
      // Shapes are laid out when first launched: later ones split classes in flight.
      if (shape_id[s] < 0)
        shape_id[s] = flows.add_shape(n.shapes[s], members_of(n.shapes[s]), l.at);
      arrival[next].assign(static_cast<std::size_t>(members_of(n.shapes[s])), Time::zero());
      launch_of[flows.launch(shape_id[s], l.scale, Time::zero(), l.at)] = next;
      ++next;
      continue;
    }
    if (!finish) break;
    done.clear();
    flows.complete_finished(*finish, done);
    for (const ClassFlows::Arrival& a : done)
      arrival[launch_of.at(a.launch)][static_cast<std::size_t>(a.member)] = a.at;
  }
  stats = flows.stats();
  return arrival;
}

}  // namespace

TEST_CASE("flows solved by class arrive when flows solved one by one do") {
  std::mt19937_64 rng(20261207);
  std::int64_t represented = 0, solved = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Network n = random_network(rng);
    std::vector<Launch> launches;
    Time t;
    const int count = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < count; ++i) {
      t += Time::from_ps(static_cast<std::int64_t>(rng() % 3) * 400'000);  // often together
      launches.push_back(Launch{static_cast<std::int32_t>(rng() % n.shapes.size()),
                                1.0 + static_cast<double>(rng() % 4), t});
    }
    const auto expected = one_by_one(n, launches);
    ClassFlows::Stats stats;
    const auto got = by_class(n, launches, stats);
    represented += stats.flows_started;
    solved += stats.classes_started;
    REQUIRE(got.size() == expected.size());
    for (std::size_t l = 0; l < got.size(); ++l) {
      REQUIRE(got[l].size() == expected[l].size());
      for (std::size_t m = 0; m < got[l].size(); ++m) {
        // The same rates up to the order of floating-point sums: a picosecond or two.
        const std::int64_t diff = (got[l][m] - expected[l][m]).ps();
        CHECK_MESSAGE(std::abs(diff) <= 2,
                      fmt::format("trial {} launch {} member {}: {} against {}", trial, l, m,
                                  got[l][m], expected[l][m]));
      }
    }
  }
  // The classes did save work (the test is not of singletons only).
  CHECK(represented > 2 * solved);
}

TEST_CASE("shapes laid out one at a time keep the classes equitable") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Network n = random_network(rng);
    FlowClasses fc(n.capacity);
    std::vector<std::vector<ShapeFlow>> added;
    for (const auto& shape : n.shapes) {
      fc.add_shape(shape);
      added.push_back(shape);
      check_equitable(fc, added);
    }
    // Every flow of a shape is in one of its classes, each class in one shape.
    std::int64_t flows = 0;
    for (std::size_t s = 0; s < n.shapes.size(); ++s) {
      std::int64_t in_classes = 0;
      for (FlowClasses::ClassId c : fc.classes(static_cast<std::int32_t>(s)))
        in_classes += fc.size(c);
      CHECK(in_classes == static_cast<std::int64_t>(n.shapes[s].size()));
      flows += in_classes;
    }
    CHECK(flows == fc.flow_count());
  }
}

TEST_CASE("one flow class per replica-symmetric shape on a symmetric network") {
  // Eight replicas of one link each, all sharing a hub: the shape's eight flows are one class,
  // and a second shape on replica 0 alone splits it into replica 0's flow and the seven others.
  std::vector<double> capacity(8, 10e9);
  capacity.push_back(40e9);
  FlowClasses fc(capacity);
  std::vector<ShapeFlow> ring;
  for (LinkId r = 0; r < 8; ++r) ring.push_back(ShapeFlow{{r, 8}, 1e6, 1.0, Time::zero(), r});
  const std::int32_t s = fc.add_shape(ring);
  REQUIRE(fc.classes(s).size() == 1);
  const FlowClasses::ClassId c = fc.classes(s).front();
  CHECK(fc.size(c) == 8);
  std::vector<FlowClasses::LinkClassId> lcs;
  std::vector<double> mult;
  fc.loads(c, lcs, mult);
  REQUIRE(lcs.size() == 2);
  // Its own link carries one member, the hub all eight.
  CHECK(mult[0] * mult[1] == 8.0);
  CHECK(std::min(mult[0], mult[1]) == 1.0);
  fc.add_shape({ShapeFlow{{0}, 1e6, 1.0, Time::zero(), 0}});
  CHECK(fc.classes(s).size() == 2);
  std::vector<std::int32_t> sizes;
  for (FlowClasses::ClassId k : fc.classes(s)) sizes.push_back(fc.size(k));
  std::sort(sizes.begin(), sizes.end());
  CHECK(sizes == std::vector<std::int32_t>{1, 7});
}
