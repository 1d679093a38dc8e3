#include "schedules/optimizer/first_device_bound.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace bubblesim::optimizer {
namespace {

enum Mode : std::uint8_t { kKept, kOffloaded, kRecomputed };

constexpr std::int64_t kMaxSteps = 1000;

/// Device 0's ops in steps of the grid and its memory in bytes.
struct Device {
  std::int64_t m = 0, tf = 0, tb = 0, tw = 0, tr = 0, to = 0, tl = 0;
  std::int64_t round_trip = 0;  // F(0, j) start to the earliest B(0, j) start
  std::int64_t mb = 0, mw = 0, in = 0, limit = 0;
  bool offload = false, recompute = false;
};

/// Does device 0 have a schedule of the relaxation whose last W ends by `target`? Depth first over
/// the next op (the next F in each allowed mode, the next B after each possible wait, the next W),
/// pruned by the work left and the last microbatch's round trip.
class Search {
 public:
  Search(const Device& d, std::int64_t target, std::int64_t node_limit)
      : d_(d), target_(target), node_limit_(node_limit) {
    const auto m = static_cast<std::size_t>(d.m);
    start_f_.assign(m, 0);
    mode_.assign(m, kKept);
    offload_end_.assign(m, 0);
    memory_.assign(static_cast<std::size_t>(target + 2 + d.to + d.tf), 0);
    offload_freed_ = memory_;
  }
  bool feasible() { return step(0, 0, 0, 0, 0, 0, 0); }
  bool exhausted() const { return nodes_ >= node_limit_; }
  std::int64_t nodes() const { return nodes_; }

 private:
  /// The memory at every step from `row` on changes by `bytes` (an allocation that starts at
  /// `row`, or with a negative sign a release that counts from `row`).
  void add(std::int64_t row, std::int64_t bytes) {
    for (auto r = static_cast<std::size_t>(std::max<std::int64_t>(0, row)); r < memory_.size(); ++r)
      memory_[r] += bytes;
  }
  /// Offloads that ended at step `row` - 1 free their bytes from `row` on; kept apart as well,
  /// since a reload starting at `row` sees them freed already (reload_fits).
  void offload_freed(std::int64_t row, std::int64_t bytes) {
    if (row < static_cast<std::int64_t>(offload_freed_.size()))
      offload_freed_[static_cast<std::size_t>(row)] += bytes;
  }
  /// The memory at the instant a reload starts at step `row`, before that step's compute events
  /// (the timing model's order: a reload's allocation first; offloads that ended at `row` - 1 are
  /// freed already), with the reload's M_B.
  bool reload_fits(std::int64_t row) const {
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t before =
        (row > 0 ? memory_[r - 1] : 0) - (r < offload_freed_.size() ? offload_freed_[r] : 0);
    return before + d_.mb <= d_.limit;
  }
  /// Within the limit at every step of [from, to] (every event up to `to` is recorded).
  bool fits(std::int64_t from, std::int64_t to) const {
    for (std::int64_t r = from; r <= to && r < static_cast<std::int64_t>(memory_.size()); ++r)
      if (memory_[static_cast<std::size_t>(r)] > d_.limit) return false;
    return true;
  }
  /// The earliest the last W can end from this state.
  std::int64_t least_end(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw,
                         std::int64_t pending_r) const {
    std::int64_t end =
        t + (d_.m - nf) * d_.tf + (d_.m - nb) * d_.tb + (d_.m - nw) * d_.tw + pending_r * d_.tr;
    const std::int64_t last_f =
        nf == d_.m ? start_f_[static_cast<std::size_t>(d_.m - 1)] : t + (d_.m - nf - 1) * d_.tf;
    end = std::max(end, last_f + d_.round_trip + d_.tb + d_.tw);
    if (nb < nf) {
      const std::int64_t first_b = start_f_[static_cast<std::size_t>(nb)] + d_.round_trip;
      end = std::max(end, first_b + (d_.m - nb) * d_.tb + (d_.m - std::max(nb, nw)) * d_.tw);
    }
    return end;
  }

  bool step(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw, std::int64_t d2h,
            std::int64_t h2d, std::int64_t pending_r) {
    if (nw == d_.m) return t <= target_;
    if (++nodes_ >= node_limit_) return false;
    if (least_end(t, nf, nb, nw, pending_r) > target_) return false;
    if (nb < nf && backward(t, nf, nb, nw, d2h, h2d, pending_r)) return true;
    if (nf < d_.m && forward(t, nf, nb, nw, d2h, h2d, pending_r)) return true;
    if (nw < nb) {
      // W's input is its own B, already done: it starts when the device is free.
      add(t + d_.tw, -d_.mw);
      const bool found = step(t + d_.tw, nf, nb, nw + 1, d2h, h2d, pending_r);
      add(t + d_.tw, d_.mw);
      if (found) return true;
    }
    return false;
  }

  /// B(0, nb) (after its R when recomputed), after every possible wait for its input.
  bool backward(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw, std::int64_t d2h,
                std::int64_t h2d, std::int64_t pending_r) {
    const auto j = static_cast<std::size_t>(nb);
    const Mode mode = mode_[j];
    std::int64_t ready = std::max(t, start_f_[j] + d_.round_trip);
    std::int64_t release = d_.mb - d_.mw;
    if (mode == kRecomputed) {
      // R starts when the device is free (its input is the device's own F) and allocates M_B.
      add(t, d_.mb);
      if (!fits(t, t)) {
        add(t, -d_.mb);
        return false;
      }
      ready = std::max(ready, t + d_.tr);
      release += d_.in;
      --pending_r;
    }
    if (mode == kOffloaded) ready = std::max({ready, offload_end_[j] + d_.tl, h2d + d_.tl});
    bool found = false;
    // The latest start that can still meet the target: the B and the W's left after it.
    const std::int64_t latest = target_ - d_.tb - (d_.m - std::max(nb + 1, nw)) * d_.tw -
                                (d_.m - nb - 1) * d_.tb - (d_.m - nf) * d_.tf - pending_r * d_.tr;
    for (std::int64_t s = ready; s <= latest && !found && !exhausted(); ++s) {
      std::int64_t reload = -1;
      if (mode == kOffloaded) {
        // The reload as late as it can go (it ends at the B's start): it allocates last, and
        // reloads of successive B's never overlap while T_L <= T_B.
        reload = s - d_.tl;
        add(reload, d_.mb);
        if (!reload_fits(reload) || !fits(reload, std::max(reload, t))) {
          add(reload, -d_.mb);
          continue;
        }
      }
      add(s + d_.tb, -release);
      found = step(s + d_.tb, nf, nb + 1, nw, d2h, mode == kOffloaded ? s : h2d, pending_r);
      add(s + d_.tb, release);
      if (reload >= 0) add(reload, -d_.mb);
    }
    if (mode == kRecomputed) add(t, -d_.mb);
    return found;
  }

  /// F(0, nf) at once (it has no input), kept, offloaded or recomputed.
  bool forward(std::int64_t t, std::int64_t nf, std::int64_t nb, std::int64_t nw, std::int64_t d2h,
               std::int64_t h2d, std::int64_t pending_r) {
    const auto j = static_cast<std::size_t>(nf);
    start_f_[j] = t;
    for (Mode mode : {kOffloaded, kKept, kRecomputed}) {
      if ((mode == kOffloaded && !d_.offload) || (mode == kRecomputed && !d_.recompute)) continue;
      mode_[j] = mode;
      const std::int64_t bytes = mode == kRecomputed ? d_.in : d_.mb;
      add(t, bytes);
      bool found = false;
      if (fits(t, t)) {
        if (mode == kOffloaded) {
          // The D2H copy right after the F, behind the earlier ones; it frees M_B only for
          // allocations after its end (strictly).
          const std::int64_t end = std::max(t + d_.tf, d2h) + d_.to;
          offload_end_[j] = end;
          add(end + 1, -d_.mb);
          offload_freed(end + 1, d_.mb);
          found = step(t + d_.tf, nf + 1, nb, nw, end, h2d, pending_r);
          offload_freed(end + 1, -d_.mb);
          add(end + 1, d_.mb);
        } else {
          found =
              step(t + d_.tf, nf + 1, nb, nw, d2h, h2d, pending_r + (mode == kRecomputed ? 1 : 0));
        }
      }
      add(t, -bytes);
      if (found || exhausted()) return found;
    }
    return false;
  }

  const Device& d_;
  std::int64_t target_, node_limit_, nodes_ = 0;
  std::vector<std::int64_t> start_f_, offload_end_, memory_, offload_freed_;
  std::vector<Mode> mode_;
};

}  // namespace

std::int64_t first_device_bound(const Problem& pr, std::int64_t from, std::int64_t node_limit,
                                bool* exact) {
  if (exact != nullptr) *exact = false;
  if (pr.placement != PlacementKind::Straight || pr.objective == Objective::Iteration ||
      !pr.memory_ops_allowed() || pr.microbatches <= 0)
    return 0;
  // The common step of every duration and delay.
  std::int64_t g = 0;
  auto gcd = [&g](std::int64_t v) { g = std::gcd(g, std::max<std::int64_t>(0, v)); };
  for (std::int32_t s = 0; s < pr.stages; ++s) {
    for (StepKind k : {StepKind::F, StepKind::B, StepKind::W}) gcd(pr.duration(k, s));
    if (s + 1 < pr.stages) {
      gcd(pr.forward_delay(s));
      gcd(pr.backward_delay(s));
    }
  }
  if (pr.memory_ops.allow_recompute) gcd(pr.duration(StepKind::R, 0));
  if (pr.memory_ops.allow_offload) {
    gcd(pr.duration(StepKind::O, 0));
    gcd(pr.duration(StepKind::L, 0));
  }
  if (g <= 0) return 0;
  Device d;
  d.m = pr.microbatches;
  d.tf = pr.duration(StepKind::F, 0) / g;
  d.tb = pr.duration(StepKind::B, 0) / g;
  d.tw = pr.duration(StepKind::W, 0) / g;
  d.offload = pr.memory_ops.allow_offload;
  d.recompute = pr.memory_ops.allow_recompute;
  if (d.recompute) d.tr = pr.duration(StepKind::R, 0) / g;
  if (d.offload) {
    d.to = pr.duration(StepKind::O, 0) / g;
    d.tl = pr.duration(StepKind::L, 0) / g;
    if (d.tl > d.tb) return 0;  // the reloads could overlap: the search's rule is not exact
  }
  std::int64_t rt = pr.forward_ps[0];
  for (std::int32_t s = 1; s < pr.stages; ++s) {
    const auto su = static_cast<std::size_t>(s);
    rt +=
        pr.forward_delay(s - 1) + pr.forward_ps[su] + pr.backward_ps[su] + pr.backward_delay(s - 1);
  }
  d.round_trip = rt / g;
  d.mb = pr.memory.activation_bytes[0];
  d.mw = pr.memory.weight_grad_bytes[0];
  d.in = pr.memory_ops.stage_input_bytes.empty() ? 0 : pr.memory_ops.stage_input_bytes[0];
  d.limit = pr.memory.limit_bytes[0];
  // Device 0 runs all its work: no target below it is possible.
  std::int64_t target = std::max((from + g - 1) / g, d.m * (d.tf + d.tb + d.tw));
  // Each search node costs a pass over the steps: only on a coarse grid.
  if (target > kMaxSteps) return 0;
  std::int64_t certified = target;  // no schedule of the relaxation ends before `certified`
  std::int64_t nodes = 0;
  // A target far beyond the work would only mean the search is not worth its time.
  const std::int64_t cap = 4 * d.m * (d.tf + d.tb + d.tw + d.tr) + d.round_trip + 8;
  for (; target <= cap && nodes < node_limit; ++target) {
    Search search(d, target, node_limit - nodes);
    const bool found = search.feasible();
    nodes += search.nodes();
    if (found) {
      if (exact != nullptr) *exact = true;
      break;
    }
    if (search.exhausted()) break;
    certified = target + 1;  // the search saw every schedule: none ends by `target`
  }
  return certified * g;
}

}  // namespace bubblesim::optimizer
