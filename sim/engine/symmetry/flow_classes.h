#pragma once
// FlowClasses: the flows a replay can start, in classes whose members provably get the same
// max-min rate at every instant, so that one flow per class can be solved in their place
// (class_flows.h, docs/engine.md "Symmetric flows").
//
// Flows are laid out once, as shapes: the flows one launch starts together (a gradient bucket's
// ring all-reduces over every data-parallel replica and tensor-parallel rank; a pipeline
// transfer, which is a shape of one flow). A launch always starts a whole shape, its flows with
// bytes in fixed proportion, so the flows in flight are always whole shapes.
//
// The classes are the coarsest equitable partition of flows and links (colour refinement of the
// bipartite graph of flows and the links they cross, links first told apart by capacity, flows
// by shape, bytes, weight and latency): within a link class every link is crossed by the same
// number of members of each flow class, and within a flow class every flow crosses the same
// number of links of each link class. Progressive filling then raises every member of a flow
// class together: at each step every link of a class has the same residual capacity and the
// same unfrozen load, so they saturate at once and freeze whole flow classes. Members start
// together (one launch), carry the same bytes at the same rate and finish together, so the set
// in flight stays a union of classes. One representative per class, loading each link class
// with the members that cross one of its links, gives every member's rate exactly (up to the
// order of floating-point sums).
//
// Refinement is Hopcroft's "process the smaller half" partition refinement with counts
// (Cardon and Crochemore's coarsest equitable partition): a class split by a splitter is queued
// except for its largest part, so each element is revisited O(log n) times. Adding a shape only
// refines the classes (never merges them): the new flows start in classes of their own, split
// by the link classes they cross, and the queue carries the change to whatever they touch.
// Every split is logged, so flows already in flight can be split the same way (class_flows.h).

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/units/time.h"
#include "topologies/topology.h"

namespace bubblesim {

/// One flow of a shape.
struct ShapeFlow {
  std::vector<LinkId> links;  // its route (non-empty, no link twice)
  double bytes = 0;           // at scale 1 (a launch multiplies it)
  double weight = 1;          // how many parallel flows it stands for (MaxMinFlows::add)
  Time latency;               // paid after its last byte
  std::int32_t member = 0;    // which of the launch's members it belongs to (its arrival counts)
};

class FlowClasses {
 public:
  using ClassId = std::int32_t;
  using LinkClassId = std::int32_t;
  /// Members of one class that belong to one member of the launch.
  struct MemberCount {
    std::int32_t member = 0;
    std::int32_t flows = 0;
  };

  /// Capacities per link (bytes/s): links start in one class per capacity.
  explicit FlowClasses(const std::vector<double>& link_capacity);

  /// Lays out a shape and refines every class until the partition is equitable again; returns
  /// the shape's id. Throws std::invalid_argument on a flow without links or with a link twice.
  std::int32_t add_shape(const std::vector<ShapeFlow>& flows);

  /// The classes of a shape's flows (they change when a later shape splits them).
  const std::vector<ClassId>& classes(std::int32_t shape) const {
    return shape_classes_[static_cast<std::size_t>(shape)];
  }
  std::int32_t size(ClassId c) const { return flows_.size(c); }
  double bytes(ClassId c) const { return info_[static_cast<std::size_t>(c)].bytes; }
  double weight(ClassId c) const { return info_[static_cast<std::size_t>(c)].weight; }
  Time latency(ClassId c) const { return info_[static_cast<std::size_t>(c)].latency; }
  const std::vector<MemberCount>& members(ClassId c) const {
    return info_[static_cast<std::size_t>(c)].members;
  }
  /// The link classes one member crosses, and how many members of the class (counting weights)
  /// cross each link of each: the representative flow's loads.
  void loads(ClassId c, std::vector<LinkClassId>& link_classes,
             std::vector<double>& multiplicity) const;
  /// A flow of the class (its first), and that flow's links.
  std::span<const LinkId> links_of_member(ClassId c) const;

  std::int32_t flow_classes() const { return flows_.classes(); }
  std::int32_t link_classes() const { return links_.classes(); }
  LinkClassId link_class(LinkId l) const { return links_.class_of(l); }
  std::int32_t links_in(LinkClassId c) const { return links_.size(c); }
  double capacity(LinkClassId c) const { return link_capacity_[links_.first_of(c)]; }
  /// The links of a class.
  std::span<const LinkId> links(LinkClassId c) const { return links_.members(c); }
  std::int64_t flow_count() const { return static_cast<std::int64_t>(flow_weight_.size()); }
  /// The class of flow f (flows numbered in the order their shapes were added, then within).
  ClassId class_of_flow(std::int32_t f) const { return flows_.class_of(f); }

  /// Splits since the last call, in order: (class split, new class holding part of it).
  std::vector<std::pair<ClassId, ClassId>> take_flow_splits();
  std::vector<std::pair<LinkClassId, LinkClassId>> take_link_splits();

 private:
  /// A refinable partition of the integers [0, n): classes are contiguous ranges of `elems`.
  class Partition {
   public:
    std::int32_t classes() const { return static_cast<std::int32_t>(first_.size()); }
    std::int32_t class_of(std::int32_t e) const { return cls_[static_cast<std::size_t>(e)]; }
    std::int32_t size(std::int32_t c) const {
      return end_[static_cast<std::size_t>(c)] - first_[static_cast<std::size_t>(c)];
    }
    std::int32_t first_of(std::int32_t c) const {
      return elems_[static_cast<std::size_t>(first_[static_cast<std::size_t>(c)])];
    }
    std::span<const std::int32_t> members(std::int32_t c) const {
      return {elems_.data() + first_[static_cast<std::size_t>(c)],
              static_cast<std::size_t>(size(c))};
    }
    /// Adds `elements` (not in any class yet) as one new class; returns it.
    std::int32_t add_class(std::span<const std::int32_t> elements);
    /// Moves `part` (elements of class c, not all of it) into a new class; returns it.
    std::int32_t split_off(std::int32_t c, std::span<const std::int32_t> part);

   private:
    std::vector<std::int32_t> elems_, pos_, cls_;
    std::vector<std::int32_t> first_, end_;
  };
  struct ClassInfo {
    double bytes = 0, weight = 1;
    Time latency;
    std::int32_t shape = 0;
    std::vector<MemberCount> members;
  };
  struct Splitter {
    bool link = false;
    std::int32_t cls = 0;
  };

  void refine();
  void split_links_by(std::int32_t flow_class);
  void split_flows_by(std::int32_t link_class);
  /// Splits every class of `touched` (elements with counts) by count; queues the parts.
  void split_by_counts(bool link, std::vector<std::pair<std::int32_t, double>>& touched);
  void enqueue(bool link, std::int32_t cls);
  void on_flow_class_split(std::int32_t parent, std::int32_t child);
  std::span<const LinkId> flow_links(std::int32_t f) const {
    return {flow_links_.data() + flow_first_[static_cast<std::size_t>(f)],
            static_cast<std::size_t>(flow_first_[static_cast<std::size_t>(f) + 1] -
                                     flow_first_[static_cast<std::size_t>(f)])};
  }

  std::vector<double> link_capacity_;
  Partition links_, flows_;
  // Flows: their links (CSR), weights and members; per link, the flows crossing it.
  std::vector<LinkId> flow_links_;
  std::vector<std::int32_t> flow_first_{0};
  std::vector<double> flow_weight_;
  std::vector<std::int32_t> flow_member_;
  std::vector<std::vector<std::int32_t>> on_link_;
  std::vector<ClassInfo> info_;  // per flow class
  std::vector<std::vector<ClassId>> shape_classes_;
  // Refinement state.
  std::vector<Splitter> queue_;
  std::vector<char> queued_flow_, queued_link_;
  std::vector<double> link_count_, flow_count_;  // scratch, zero outside a split
  std::vector<std::pair<ClassId, ClassId>> flow_splits_;
  std::vector<std::pair<LinkClassId, LinkClassId>> link_splits_;
};

}  // namespace bubblesim
