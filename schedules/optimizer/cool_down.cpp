#include "schedules/optimizer/cool_down.h"

#include <algorithm>
#include <deque>

namespace bubblesim::optimizer {
namespace {

constexpr std::int64_t kNotYet = Problem::kNotReady;

/// One device's part of the rebuild: its fixed head (up to its last F), the B's of its tail in
/// their old order, and the W's whose B has run.
struct DeviceState {
  std::vector<Step> head;
  std::size_t next = 0;  // into head
  std::vector<Step> tail_b;
  std::vector<char> tail_b_done;
  std::deque<Step> pending_w;  // tail W's whose B has run, oldest first
  std::int64_t free = 0;
  std::int64_t memory = 0;
};

/// The next op a device would run and when; start kNotYet when it has none it can place now.
struct Action {
  Step step;
  std::int64_t start = kNotYet;
  std::size_t tail_index = 0;  // for a tail B
  enum { Head, TailB, TailW } from = Head;
};

class Rebuild {
 public:
  Rebuild(const Problem& pr, const Order& order) : pr_(pr) {
    const std::size_t n = pr.activations();
    for (auto& e : end_) e.assign(n, -1);
    b_in_tail_.assign(n, 0);
    w_in_tail_.assign(n, 0);
    devices_.resize(order.size());
    for (std::size_t d = 0; d < order.size(); ++d) {
      const auto& ops = order[d];
      std::size_t last_f = 0;
      bool any_f = false;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind == StepKind::F) {
          last_f = i;
          any_f = true;
        }
      }
      DeviceState& ds = devices_[d];
      const std::size_t cut = any_f ? last_f + 1 : 0;
      ds.head.assign(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(cut));
      for (std::size_t i = cut; i < ops.size(); ++i) {
        const Step& st = ops[i];
        if (st.kind == StepKind::B) {
          ds.tail_b.push_back(st);
          b_in_tail_[pr.index(st.stage, st.microbatch)] = 1;
        } else {
          w_in_tail_[pr.index(st.stage, st.microbatch)] = 1;
        }
      }
      ds.tail_b_done.assign(ds.tail_b.size(), 0);
      // W's in the tail whose B is in the head are pending from the start (in their old order).
      for (std::size_t i = cut; i < ops.size(); ++i)
        if (ops[i].kind == StepKind::W && !b_in_tail_[pr.index(ops[i].stage, ops[i].microbatch)])
          ds.pending_w.push_back(ops[i]);
      total_ += ops.size();
    }
  }

  std::optional<Order> run() {
    Order out(devices_.size());
    // Each device's next action, recomputed only when an op it may wait for was placed.
    std::vector<Action> action(devices_.size());
    std::vector<char> stale(devices_.size(), 1);
    std::size_t placed = 0;
    while (placed < total_) {
      std::int32_t best = -1;
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        if (stale[d]) {
          action[d] = next_action(d);
          stale[d] = 0;
        }
        if (best < 0 || action[d].start < action[static_cast<std::size_t>(best)].start)
          best = static_cast<std::int32_t>(d);
      }
      const auto bu = static_cast<std::size_t>(best);
      if (action[bu].start == kNotYet) return std::nullopt;  // every device waits on another
      const Step st = action[bu].step;
      place(bu, action[bu], out);
      ++placed;
      stale[bu] = 1;
      if (st.kind == StepKind::F && st.stage + 1 < pr_.stages)
        stale[static_cast<std::size_t>(pr_.device(st.stage + 1))] = 1;
      if (st.kind == StepKind::B && st.stage > 0)
        stale[static_cast<std::size_t>(pr_.device(st.stage - 1))] = 1;
    }
    return out;
  }

 private:
  std::int64_t& end_of(StepKind k, std::int32_t s, std::int32_t j) {
    return end_[static_cast<int>(k)][pr_.index(s, j)];
  }

  /// When `st`'s inputs are there, or kNotYet when one of them has not been placed.
  std::int64_t ready(const Step& st) {
    const auto& f_end = end_[static_cast<int>(StepKind::F)];
    const auto& b_end = end_[static_cast<int>(StepKind::B)];
    switch (st.kind) {
      case StepKind::F:
        return pr_.forward_ready(st.stage, st.microbatch, f_end);
      case StepKind::B:
        return pr_.backward_ready(st.stage, st.microbatch, f_end, b_end);
      default: {
        const std::int64_t b = b_end[pr_.index(st.stage, st.microbatch)];
        return b < 0 ? kNotYet : b;
      }
    }
  }

  Action next_action(std::size_t d) {
    DeviceState& ds = devices_[d];
    Action a;
    if (ds.next < ds.head.size()) {
      const Step& st = ds.head[ds.next];
      const std::int64_t r = ready(st);
      if (r != kNotYet) {
        a.step = st;
        a.start = std::max(r, ds.free);
      }
      return a;
    }
    // The tail: the B that can start first (later stage first at equal start).
    Action b;
    b.from = Action::TailB;
    const std::int64_t limit = pr_.memory.limit_bytes[d];
    for (std::size_t i = 0; i < ds.tail_b.size(); ++i) {
      if (ds.tail_b_done[i]) continue;
      const Step& st = ds.tail_b[i];
      if (pr_.memory_delta(st.kind, st.stage) > 0 &&
          ds.memory + pr_.memory_delta(st.kind, st.stage) > limit)
        continue;
      const std::int64_t r = ready(st);
      if (r == kNotYet) continue;
      const std::int64_t start = std::max(r, ds.free);
      if (start < b.start || (start == b.start && st.stage > b.step.stage)) {
        b.step = st;
        b.start = start;
        b.tail_index = i;
      }
    }
    if (!ds.pending_w.empty()) {
      const Step& w = ds.pending_w.front();
      if (b.start == kNotYet || ds.free + pr_.duration(StepKind::W, w.stage) <= b.start) {
        a.step = w;
        a.start = ds.free;
        a.from = Action::TailW;
        return a;
      }
    }
    return b;
  }

  void place(std::size_t d, const Action& a, Order& out) {
    DeviceState& ds = devices_[d];
    const Step& st = a.step;
    const std::int64_t e = a.start + pr_.duration(st.kind, st.stage);
    end_of(st.kind, st.stage, st.microbatch) = e;
    ds.free = e;
    ds.memory += pr_.memory_delta(st.kind, st.stage);
    out[d].push_back(st);
    switch (a.from) {
      case Action::Head:
        ++ds.next;
        break;
      case Action::TailB:
        ds.tail_b_done[a.tail_index] = 1;
        if (w_in_tail_[pr_.index(st.stage, st.microbatch)])
          ds.pending_w.push_back(Step{StepKind::W, st.stage, st.microbatch});
        break;
      case Action::TailW:
        ds.pending_w.pop_front();
        break;
    }
  }

  const Problem& pr_;
  std::vector<std::int64_t> end_[3];  // F, B, W end per activation; -1 until placed
  std::vector<char> b_in_tail_, w_in_tail_;
  std::vector<DeviceState> devices_;
  std::size_t total_ = 0;
};

}  // namespace

std::optional<Order> rebuild_cool_down(const Problem& problem, const Order& order) {
  if (order.size() != static_cast<std::size_t>(problem.devices)) return std::nullopt;
  for (const auto& ops : order)
    for (const Step& st : ops)
      if (static_cast<int>(st.kind) > static_cast<int>(StepKind::W)) return std::nullopt;
  return Rebuild(problem, order).run();
}

}  // namespace bubblesim::optimizer
