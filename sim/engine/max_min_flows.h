#pragma once
// MaxMinFlows: the flow solver behind the FlowNetwork network model (sim/engine/network):
// data transfers over directed links with capacities.
//
// Concurrent flows share every link by max-min fairness (progressive filling): rates are raised
// together until a link saturates; flows through it are frozen at that rate and the rest continue.
// Rates change only when a flow starts, finishes or a capacity changes, and only the flows that
// share links (transitively) with the change are recomputed — max-min rates of separate
// components are independent.
//
// Time is exact integer picoseconds; progress (bytes) is floating point. A flow's completion is
// predicted when its rate is set, rounded up to a whole picosecond, and it is finished exactly at
// that time, so next_completion() and complete_finished() always agree. Identical call sequences
// give identical results (every loop runs in flow-id or link-id order).
//
// Cost: active flows live in one contiguous array in id order (no node allocation per flow, link
// lists recycled), and every update reuses scratch arrays, so adding or finishing a flow
// allocates nothing in the steady state. advance() still touches every active flow (progress is
// accumulated eagerly, interval by interval, which fixes the floating-point results).

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/topology.h"

namespace bubblesim {

class MaxMinFlows {
 public:
  using FlowId = std::int32_t;

  /// One capacity per directed link (LinkId = index), bytes/s, >= 0 (0 = cut).
  explicit MaxMinFlows(std::vector<double> link_capacity_bytes_per_s);
  /// Capacities from a topology's link bandwidths.
  static MaxMinFlows for_topology(const Topology& topology);

  /// Advances every active flow's progress to `now` at its current rate, then adds a flow over
  /// `links` (non-empty, no link twice) carrying `bytes` (> 0) and recomputes max-min rates.
  /// `weight` (> 0): the flow stands for that many identical flows (weighted max-min: its rate is
  /// `weight` fair shares of its bottleneck; 1 = a plain flow).
  /// Throws std::invalid_argument on bad arguments and std::logic_error when `now` goes back.
  FlowId add(const std::vector<LinkId>& links, double bytes, Time now, double weight = 1.0);
  FlowId add(const std::vector<LinkId>& links, Bytes bytes, Time now) {
    return add(links, bytes.as_double(), now);
  }
  /// A flow standing for a class of identical flows (sim/engine/symmetry/class_flows.h): over
  /// links i it loads `multiplicity[i]` times its rate (> 0: that many members of the class cross
  /// each one of the links the index stands for); rate() and `bytes` are one member's.
  FlowId add(const std::vector<LinkId>& links, const std::vector<double>& multiplicity,
             double bytes, Time now);
  /// Advances to `now` and takes an active flow out (what it still had to move never moves);
  /// the rates of the flows it shared links with are recomputed.
  void remove(FlowId id, Time now);
  /// Flows added between begin_batch() and end_batch() (all at one time) get their rates once, at
  /// end_batch(): the rates one add at a time would leave, without re-rating the flows they share
  /// links with after every add (a launch of many flows over one switch).
  void begin_batch() { batching_ = true; }
  void end_batch();
  /// Advances every active flow's progress and the links' usage to `now`.
  void advance_to(Time now) { advance(now); }
  /// A new link of `capacity` bytes/s (its id is link_count() before the call).
  LinkId add_link(double capacity);
  /// Adds link `from`'s busy time and bytes so far to link `to` (a class of identical links split
  /// in two: each part carried what the whole did until then).
  void copy_link_usage(LinkId from, LinkId to);

  /// Advance to `now`, remove every flow whose completion time is <= now, recompute rates and
  /// return the finished ids in ascending order.
  std::vector<FlowId> complete_finished(Time now);
  /// The same, appending the finished ids to `finished` (cleared first) so a caller can reuse it.
  void complete_finished(Time now, std::vector<FlowId>& finished);

  /// Earliest time (rounded UP to whole picoseconds) at which an active flow finishes at current
  /// rates; nullopt when no flow is active or every active flow is stalled (rate 0).
  std::optional<Time> next_completion() const;

  /// Current rate of an active flow, bytes/s. Throws std::out_of_range for an id not active.
  double rate(FlowId id) const;
  Bandwidth bandwidth(FlowId id) const { return Bandwidth::bytes_per_second(rate(id)); }
  /// Bytes an active flow still has to move, as of the last update time.
  double remaining_bytes(FlowId id) const;
  bool is_active(FlowId id) const { return find_slot(id) >= 0; }
  std::size_t active_flows() const { return flows_.size(); }

  /// Per directed link, up to the last update time: total time during which at least one flow
  /// moved data over it, and bytes carried.
  Time link_busy_time(LinkId l) const;
  double link_bytes(LinkId l) const;
  double link_capacity(LinkId l) const;
  std::int32_t link_count() const { return static_cast<std::int32_t>(links_.size()); }
  /// The time of the last add / complete_finished / set_link_capacity call.
  Time last_update() const { return now_; }

  /// Advance to `now`, change a link's capacity (0 = cut: flows over it stall) and recompute.
  void set_link_capacity(LinkId l, double capacity, Time now);

  /// When a flow of `bytes` left at `rate` (bytes/s) from `now` finishes: the prediction every
  /// flow gets when its rate is set. Time::max() when it never does.
  static Time finish_time(double bytes, double rate, Time now);

 private:
  struct Flow {
    FlowId id = 0;
    std::vector<LinkId> links;
    double total = 0.0;
    double remaining = 0.0;
    double rate = 0.0;
    double weight = 1.0;
    std::vector<double> multiplicity;  // per link of `links`; empty: 1 each
    Time finish = Time::max();         // predicted completion at `rate`; max() when stalled
    double load(std::size_t i) const { return multiplicity.empty() ? 1.0 : multiplicity[i]; }
    double load_on(LinkId l) const;  // load() of link l (which the flow crosses)
  };
  struct Link {
    double capacity = 0.0;
    std::vector<FlowId> flows;  // active flows over this link, ascending
    Time busy;
    double bytes = 0.0;
  };

  /// advance()'s: links busy during the step and until when.
  struct AdvanceScratch {
    std::vector<Time> busy_end;  // per link; zero otherwise
    std::vector<LinkId> busy_links;
  };
  /// recompute()'s: the connected component of links and flows being re-rated (progressive
  /// filling); the per-link and per-slot vectors are zero outside recompute().
  struct RecomputeScratch {
    std::vector<char> link_seen;  // per link
    std::vector<LinkId> comp_links, queue;
    std::vector<std::int32_t> comp_flows;  // slots
    std::vector<char> frozen;              // per slot
    std::vector<double> new_rate;          // per slot
    std::vector<double> cap;               // per link
    std::vector<std::int32_t> unfrozen;    // per link: flows not fixed yet
    std::vector<double> unfrozen_weight;   // per link: their weights' sum
  };

  void advance(Time now);
  void recompute(const std::vector<LinkId>& seed_links);
  FlowId insert(const std::vector<LinkId>& links, const std::vector<double>* multiplicity,
                double bytes, Time now, double weight);
  // Records a flow's new predicted finish in finish_heap_ (rebuilt when stale entries pile up).
  void note_finish(const Flow& f);
  Time predict_finish(const Flow& f) const;
  void check_link(LinkId l) const;
  const Flow& flow(FlowId id) const;
  std::int32_t find_slot(FlowId id) const {
    return id >= 0 && static_cast<std::size_t>(id) < slot_of_.size()
               ? slot_of_[static_cast<std::size_t>(id)]
               : -1;
  }

  std::vector<Link> links_;
  std::vector<Flow> flows_;
  // (finish, id) of every active flow's prediction, plus stale entries of flows that finished or
  // were re-rated (skipped by next_completion): the next completion without a pass over all
  // flows (12,288 GPUs' gradient rings are ~10^4 concurrent flows, and it is asked every event).
  mutable std::vector<std::pair<Time, FlowId>> finish_heap_;  // active flows in id order
  std::vector<std::int32_t> slot_of_;  // flow id -> index in flows_, -1 once finished
  FlowId next_id_ = 0;
  Time now_;
  bool batching_ = false;
  std::vector<LinkId> batch_links_;  // the batch's flows' links, rated at end_batch()

  // Scratch space reused by every update (sized to the links or the active flows).
  std::vector<std::vector<LinkId>> spare_links_;  // link lists of finished flows, for reuse
  std::vector<LinkId> touched_;                   // links of the flows complete_finished() removed
  AdvanceScratch advance_scratch_;
  RecomputeScratch recompute_scratch_;
};

}  // namespace bubblesim
