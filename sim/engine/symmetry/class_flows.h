#pragma once
// ClassFlows: the flows of a replay solved one class at a time (flow_classes.h). Every launch
// of a shape starts one representative flow per class of the shape on a MaxMinFlows whose links
// are the link classes, loading each with the members of its class that cross one of its links;
// its rate is each member's. When a representative finishes, every member of its class has, and
// each launch member counts its flows off: a member's flows have all arrived when the last of
// its classes has (finish plus the class's latency).
//
// A shape laid out while flows are in flight may split classes in flight: their members are in
// the same state (same start, bytes and rate so far), so each in-flight representative is taken
// out and put back, with what it had left, as one representative per part; a split link class
// keeps its usage so far in both parts. This is exact, and only costs when a new shape arrives.
//
// docs/engine.md, "Symmetric flows", says what it buys and how it is checked against solving
// every flow (tests/engine/symmetric_flows_test.cpp, tests/runner/symmetry_differential_test.cpp).

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sim/engine/max_min_flows.h"
#include "sim/engine/symmetry/flow_classes.h"

namespace bubblesim {

class ClassFlows {
 public:
  /// A launch member whose flows have all arrived.
  struct Arrival {
    std::int32_t launch = 0;
    std::int32_t member = 0;
    Time at;
  };
  /// What the classes saved, for the report.
  struct Stats {
    std::int64_t shapes = 0;
    std::int64_t laid_out = 0;         // flows of every shape
    std::int64_t flows_started = 0;    // flows the launches stand for
    std::int64_t classes_started = 0;  // representatives started
    std::int64_t flow_classes = 0;     // classes at the end
    std::int64_t link_classes = 0;
  };

  /// One capacity per directed link (bytes/s).
  explicit ClassFlows(const std::vector<double>& link_capacity);

  /// Lays out a shape (flow_classes.h); its flows' member indices must be < `members`.
  std::int32_t add_shape(const std::vector<ShapeFlow>& flows, std::int32_t members, Time now);
  /// The shape of a single flow over `links` (bytes 1, no latency), laid out on first use.
  std::int32_t single(const std::vector<LinkId>& links, double weight, Time now);
  /// Starts every flow of `shape` with its bytes x `scale`; every class pays its latency plus
  /// `extra_latency`. Returns the launch (its arrivals name it); a shape without flows is never
  /// launched (the caller knows it is done).
  std::int32_t launch(std::int32_t shape, double scale, Time extra_latency, Time now);
  std::int32_t members(std::int32_t shape) const {
    return shape_members_[static_cast<std::size_t>(shape)];
  }

  /// The earliest finish of a representative in flight (MaxMinFlows::next_completion).
  std::optional<Time> next_completion() const { return solver_.next_completion(); }
  /// Finishes the representatives due at `now`; appends the members done to `done`.
  void complete_finished(Time now, std::vector<Arrival>& done);
  std::size_t active() const { return active_.size(); }
  /// Launches still in flight with their members' bytes left (a deadlock's report).
  std::vector<std::pair<std::int32_t, double>> in_flight() const;

  /// Per directed link: busy time and bytes so far (those of its class).
  Time link_busy_time(LinkId l) const { return solver_.link_busy_time(classes_.link_class(l)); }
  double link_bytes(LinkId l) const { return solver_.link_bytes(classes_.link_class(l)); }
  Stats stats() const;

 private:
  struct Launch {
    std::int32_t shape = 0;
    double scale = 1;
    Time extra;
    std::vector<std::int32_t> outstanding;  // per member: flows not arrived
    std::vector<Time> last;                 // per member: its latest arrival so far
    std::int32_t classes = 0;               // representatives in flight
  };
  struct Active {
    std::int32_t launch = 0;
    FlowClasses::ClassId cls = 0;
  };

  void start_class(std::int32_t launch, FlowClasses::ClassId c, double bytes, Time now);
  /// After a layout that split classes or link classes: new solver links, and every
  /// representative in flight put back as its class's parts.
  void rebase(Time now);

  FlowClasses classes_;
  MaxMinFlows solver_;  // links: link classes
  std::vector<std::int32_t> shape_members_;
  std::vector<std::vector<std::int32_t>> shape_member_flows_;  // per shape, per member
  std::vector<Launch> launches_;
  std::vector<std::int32_t> free_launches_;
  std::vector<std::pair<MaxMinFlows::FlowId, Active>> active_;  // sorted by flow id
  std::map<std::pair<std::vector<LinkId>, double>, std::int32_t> singles_;
  std::vector<MaxMinFlows::FlowId> finished_;          // scratch
  std::vector<FlowClasses::LinkClassId> loads_links_;  // scratch
  std::vector<double> loads_;                          // scratch
  Stats stats_;
};

}  // namespace bubblesim
