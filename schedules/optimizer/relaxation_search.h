#pragma once
// Internal to first_device_bound.cpp: the depth-first search over one device's schedules in the
// devices' relaxation (first_device_bound.h; docs/optimizer.md, bounds 4 and 5), on the problem's
// time grid.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer::relaxation {

enum Mode : std::uint8_t { kKept, kOffloaded, kRecomputed };

/// One device's ops in steps of the grid and its memory in bytes (the device of one stage).
struct Device {
  std::int64_t m = 0, tf = 0, tb = 0, tw = 0, tr = 0, to = 0, tl = 0;
  std::int64_t round_trip = 0;  // F(s, j) start to the earliest B(s, j) start
  /// M_B, M_W, what a recomputed F keeps, and the activation limit, in bytes.
  struct Memory {
    std::int64_t mb = 0, mw = 0, in = 0, limit = 0;
  } memory;
  bool offload = false, recompute = false;
  bool last = false;  // the pipeline's last stage: a B's only input is its own F
  /// Per microbatch, when given (the chain: set by the device before): the step F's input
  /// arrives (empty: at once), the step by which the B must end (empty: no deadline), and whether
  /// it must end exactly then (the B of the device before waited for it).
  struct Inputs {
    std::vector<std::int64_t> ready_f, deadline_b;
    std::vector<char> exact_b;
  } inputs;
};

/// Does the device have a schedule of the relaxation whose last W ends by `target`? Depth first
/// over the next op (the next F in each allowed mode, the next B after each possible wait, the
/// next W), pruned by the work left and the last microbatch's round trip. `leaf`, when set, is
/// asked about every complete schedule found (true: accept it, false: search on).
class Search {
 public:
  /// At `deadline` (deadline.h) it stops as at the node limit: the targets it exhausted stay
  /// certified.
  Search(const Device& d, std::int64_t target, std::int64_t node_limit, std::int64_t& nodes,
         std::function<bool(const Search&)> leaf = nullptr,
         Clock::time_point deadline = kNoDeadline)
      : d_(d),
        target_(target),
        node_limit_(node_limit),
        nodes_(nodes),
        leaf_(std::move(leaf)),
        deadline_(deadline) {
    const auto m = static_cast<std::size_t>(d.m);
    plan_.start_f.assign(m, 0);
    plan_.start_b.assign(m, 0);
    plan_.waited_b.assign(m, 0);
    plan_.start_r.assign(m, -1);
    plan_.start_l.assign(m, -1);
    plan_.mode.assign(m, kKept);
    plan_.offload_end.assign(m, 0);
    rows_.memory.assign(static_cast<std::size_t>(target + 2 + d.to + d.tf), 0);
    rows_.offload_freed = rows_.memory;
  }
  bool feasible() { return step(0, 0, 0, 0, 0, 0, 0); }
  bool exhausted() const { return nodes_ >= node_limit_; }
  /// The current schedule's F and B start steps (complete when `leaf` is asked).
  std::int64_t start_f(std::int64_t j) const { return plan_.start_f[static_cast<std::size_t>(j)]; }
  std::int64_t start_b(std::int64_t j) const { return plan_.start_b[static_cast<std::size_t>(j)]; }
  /// Whether B(s, j) waited for its input from the next stage (it starts when that arrives).
  bool waited_b(std::int64_t j) const { return plan_.waited_b[static_cast<std::size_t>(j)] != 0; }
  Mode mode(std::int64_t j) const { return plan_.mode[static_cast<std::size_t>(j)]; }
  /// The current (complete) schedule as the device's list for `stage`: compute ops by start, O
  /// right after its F, L right after the compute op that starts last at or before it.
  std::vector<Step> list(std::int32_t stage) const {
    std::vector<std::pair<std::int64_t, Step>> timed;  // 4 start + 1 (compute), 2 (O), 3 (L)
    for (std::size_t j = 0; j < plan_.start_f.size(); ++j) {
      const auto mb = static_cast<std::int32_t>(j);
      timed.push_back({4 * plan_.start_f[j] + 1, Step{StepKind::F, stage, mb}});
      timed.push_back({4 * plan_.start_b[j] + 1, Step{StepKind::B, stage, mb}});
      timed.push_back({4 * plan_.start_w[j] + 1, Step{StepKind::W, stage, mb}});
      if (plan_.mode[j] == kRecomputed)
        timed.push_back({4 * plan_.start_r[j] + 1, Step{StepKind::R, stage, mb}});
      if (plan_.mode[j] == kOffloaded) {
        timed.push_back({4 * plan_.start_f[j] + 2, Step{StepKind::O, stage, mb}});
        timed.push_back({4 * plan_.start_l[j] + 3, Step{StepKind::L, stage, mb}});
      }
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Step> out;
    for (const auto& e : timed) out.push_back(e.second);
    return out;
  }

 private:
  /// The memory at every step from `row` on changes by `bytes` (an allocation that starts at
  /// `row`, or with a negative sign a release that counts from `row`).
  void add(std::int64_t row, std::int64_t bytes) {
    for (auto r = static_cast<std::size_t>(std::max<std::int64_t>(0, row)); r < rows_.memory.size();
         ++r)
      rows_.memory[r] += bytes;
  }
  /// Offloads that ended at step `row` - 1 free their bytes from `row` on; kept apart as well,
  /// since a reload starting at `row` sees them freed already (reload_fits).
  void offload_freed(std::int64_t row, std::int64_t bytes) {
    if (row < static_cast<std::int64_t>(rows_.offload_freed.size()))
      rows_.offload_freed[static_cast<std::size_t>(row)] += bytes;
  }
  /// The memory at the instant a reload starts at step `row`, before that step's compute events
  /// (the timing model's order: a reload's allocation first; offloads that ended at `row` - 1 are
  /// freed already), with the reload's M_B.
  bool reload_fits(std::int64_t row) const {
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t before = (row > 0 ? rows_.memory[r - 1] : 0) -
                                (r < rows_.offload_freed.size() ? rows_.offload_freed[r] : 0);
    return before + d_.memory.mb <= d_.memory.limit;
  }
  /// Within the limit at every step of [from, to] (every event up to `to` is recorded).
  bool fits(std::int64_t from, std::int64_t to) const {
    for (std::int64_t r = from; r <= to && r < static_cast<std::int64_t>(rows_.memory.size()); ++r)
      if (rows_.memory[static_cast<std::size_t>(r)] > d_.memory.limit) return false;
    return true;
  }
  std::int64_t ready_f(std::int64_t j) const {
    return d_.inputs.ready_f.empty() ? 0 : d_.inputs.ready_f[static_cast<std::size_t>(j)];
  }
  /// The earliest the last W can end from this state.
  std::int64_t least_end(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw,
                         std::int64_t pending_r) const {
    std::int64_t end =
        t + (d_.m - nf) * d_.tf + (d_.m - nb) * d_.tb + (d_.m - nw) * d_.tw + pending_r * d_.tr;
    const std::int64_t last_f = nf == d_.m
                                    ? plan_.start_f[static_cast<std::size_t>(d_.m - 1)]
                                    : std::max(t + (d_.m - nf - 1) * d_.tf, ready_f(d_.m - 1));
    end = std::max(end, last_f + d_.round_trip + d_.tb + d_.tw);
    if (nb < nf) {
      const std::int64_t first_b = plan_.start_f[static_cast<std::size_t>(nb)] + d_.round_trip;
      end = std::max(end, first_b + (d_.m - nb) * d_.tb + (d_.m - std::max(nb, nw)) * d_.tw);
    }
    return end;
  }

  bool step(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw, std::int64_t d2h,
            std::int64_t h2d, std::int64_t pending_r) {
    if (nw == d_.m) return t <= target_ && (!leaf_ || leaf_(*this));
    if (++nodes_ >= node_limit_) return false;
    if ((nodes_ & 4095) == 0 && passed(deadline_)) {
      nodes_ = node_limit_;  // exhausted: stop as at the node limit
      return false;
    }
    if (least_end(t, nf, nb, nw, pending_r) > target_) return false;
    if (nb < nf && backward(t, nf, nb, nw, d2h, h2d, pending_r)) return true;
    if (nf < d_.m && forward(t, nf, nb, nw, d2h, h2d, pending_r)) return true;
    if (nw < nb) {
      // W's input is its own B, already done: it starts when the device is free.
      add(t + d_.tw, -d_.memory.mw);
      starts_.push_back(t);
      plan_.start_w.push_back(t);
      const bool found = step(t + d_.tw, nf, nb, nw + 1, d2h, h2d, pending_r);
      plan_.start_w.pop_back();
      starts_.pop_back();
      add(t + d_.tw, d_.memory.mw);
      if (found) return true;
    }
    return false;
  }

  /// B(0, nb) (after its R when recomputed), after every possible wait for its input.
  bool backward(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw, std::int64_t d2h,
                std::int64_t h2d, std::int64_t pending_r) {
    const auto j = static_cast<std::size_t>(nb);
    const Mode mode = plan_.mode[j];
    std::int64_t ready = std::max(t, plan_.start_f[j] + d_.round_trip);
    std::int64_t free = t;  // when the device could start the B but for its inputs
    std::int64_t release = d_.memory.mb - d_.memory.mw;
    if (mode == kRecomputed) {
      // R starts when the device is free (its input is the device's own F) and allocates M_B.
      add(t, d_.memory.mb);
      if (!fits(t, t)) {
        add(t, -d_.memory.mb);
        return false;
      }
      starts_.push_back(t);
      plan_.start_r[j] = t;
      ready = std::max(ready, t + d_.tr);
      free = t + d_.tr;
      release += d_.memory.in;
      --pending_r;
    }
    if (mode == kOffloaded) ready = std::max({ready, plan_.offload_end[j] + d_.tl, h2d + d_.tl});
    bool found = false;
    // The latest start that can still meet the target: the B and the W's left after it.
    std::int64_t latest = target_ - d_.tb - (d_.m - std::max(nb + 1, nw)) * d_.tw -
                          (d_.m - nb - 1) * d_.tb - (d_.m - nf) * d_.tf - pending_r * d_.tr;
    if (!d_.inputs.deadline_b.empty()) latest = std::min(latest, d_.inputs.deadline_b[j] - d_.tb);
    // No voluntary wait: a B whose input arrives at a known step starts then (or when the
    // device is free); a reloaded one may still wait for its reload.
    const bool exact = !d_.inputs.exact_b.empty() && d_.inputs.exact_b[j];
    if (exact) {
      ready = std::max(ready, d_.inputs.deadline_b[j] - d_.tb);
      latest = std::min(latest, d_.inputs.deadline_b[j] - d_.tb);
    }
    if (d_.last && mode != kOffloaded) latest = std::min(latest, ready);
    for (std::int64_t s = ready; s <= latest && !found && !exhausted(); ++s) {
      std::int64_t reload = -1;
      if (mode == kOffloaded) {
        // The engine starts a reload when the compute op listed before it starts, or later when
        // its offload or the previous reload ends: the latest such step that ends it by s (it
        // allocates last and frees at the same time; reloads of successive B's never overlap
        // while T_L <= T_B).
        reload = std::max(plan_.offload_end[j], h2d);
        for (std::size_t k = starts_.size(); k-- > 0;) {
          if (starts_[k] + d_.tl <= s) {
            reload = std::max(reload, starts_[k]);
            break;
          }
        }
        if (reload + d_.tl > s) continue;
        plan_.start_l[j] = reload;
        add(reload, d_.memory.mb);
        if (!reload_fits(reload) || !fits(reload, std::max(reload, t))) {
          add(reload, -d_.memory.mb);
          continue;
        }
      }
      add(s + d_.tb, -release);
      plan_.start_b[j] = s;
      // Started later than the device and its reload allowed: it waited for its input.
      plan_.waited_b[j] = s > (reload >= 0 ? std::max(free, reload + d_.tl) : free) ? 1 : 0;
      starts_.push_back(s);
      found = step(s + d_.tb, nf, nb + 1, nw, d2h, reload >= 0 ? reload + d_.tl : h2d, pending_r);
      starts_.pop_back();
      add(s + d_.tb, release);
      if (reload >= 0) add(reload, -d_.memory.mb);
    }
    if (mode == kRecomputed) {
      starts_.pop_back();
      add(t, -d_.memory.mb);
    }
    return found;
  }

  /// F(s, nf) as soon as the device is free and its input is there, kept, offloaded or
  /// recomputed.
  bool forward(std::int64_t free, std::int64_t nf, std::int64_t nb, std::int64_t nw,
               std::int64_t d2h, std::int64_t h2d, std::int64_t pending_r) {
    const auto j = static_cast<std::size_t>(nf);
    const std::int64_t t = std::max(free, ready_f(nf));
    if (least_end(t, nf, nb, nw, pending_r) > target_) return false;
    plan_.start_f[j] = t;
    for (Mode mode : {kOffloaded, kKept, kRecomputed}) {
      if ((mode == kOffloaded && !d_.offload) || (mode == kRecomputed && !d_.recompute)) continue;
      plan_.mode[j] = mode;
      const std::int64_t bytes = mode == kRecomputed ? d_.memory.in : d_.memory.mb;
      add(t, bytes);
      starts_.push_back(t);
      bool found = false;
      if (fits(t, t)) {
        if (mode == kOffloaded) {
          // The D2H copy right after the F, behind the earlier ones; it frees M_B only for
          // allocations after its end (strictly).
          const std::int64_t end = std::max(t + d_.tf, d2h) + d_.to;
          plan_.offload_end[j] = end;
          add(end + 1, -d_.memory.mb);
          offload_freed(end + 1, d_.memory.mb);
          found = step(t + d_.tf, nf + 1, nb, nw, end, h2d, pending_r);
          offload_freed(end + 1, -d_.memory.mb);
          add(end + 1, d_.memory.mb);
        } else {
          found =
              step(t + d_.tf, nf + 1, nb, nw, d2h, h2d, pending_r + (mode == kRecomputed ? 1 : 0));
        }
      }
      starts_.pop_back();
      add(t, -bytes);
      if (found || exhausted()) return found;
    }
    return false;
  }

  /// The current schedule: per microbatch its F's mode and start, its B's start (and whether it
  /// waited for its input), its R's and reload's starts, its offload's end; the W's in order.
  struct Plan {
    std::vector<Mode> mode;
    std::vector<std::int64_t> start_f, start_b, start_r, start_l, offload_end, start_w;
    std::vector<char> waited_b;
  };
  /// The device's memory per step, and what offloads ended at the step before free (reload_fits).
  struct Rows {
    std::vector<std::int64_t> memory, offload_freed;
  };

  const Device& d_;
  std::int64_t target_, node_limit_;
  std::int64_t& nodes_;  // shared by nested searches
  std::function<bool(const Search&)> leaf_;
  Clock::time_point deadline_;
  Plan plan_;
  Rows rows_;
  std::vector<std::int64_t> starts_;  // the compute ops' start steps so far, in order
};

}  // namespace bubblesim::optimizer::relaxation
