#include "schedules/optimizer/greedy.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace bubblesim::optimizer {
namespace {

constexpr std::int64_t kUnknown = Problem::kNotReady;

class Greedy {
 public:
  Greedy(const Problem& pr, const GreedyRules& rules, std::mt19937_64* random,
         const Order* priority = nullptr)
      : pr_(pr), rules_(rules), random_(random), m_(pr.microbatches) {
    if (priority != nullptr) {
      rank_.assign(3 * pr.activations(), std::numeric_limits<std::int32_t>::max());
      for (const auto& ops : *priority)
        for (std::size_t i = 0; i < ops.size(); ++i)
          if (static_cast<int>(ops[i].kind) < 3) rank_[key(ops[i])] = static_cast<std::int32_t>(i);
    }
    const auto p = static_cast<std::size_t>(pr.devices);
    const std::size_t n = pr.activations();
    done_.f_end.assign(n, -1);
    done_.b_end.assign(n, -1);
    done_.next_f.assign(static_cast<std::size_t>(pr.stages), 0);
    done_.next_b.assign(static_cast<std::size_t>(pr.stages), 0);
    done_.pending_w.assign(p, {});
    device_.free.assign(p, 0);
    device_.memory.assign(p, 0);
    device_.reserve.assign(p, 0);
    device_.inflight.assign(p, 0);
    order_.assign(p, {});
    layout_.stages.resize(p);
    layout_.cap.assign(p, std::numeric_limits<std::int32_t>::max());
    layout_.largest_later.assign(p, 0);
    for (std::int32_t d = 0; d < pr.devices; ++d) {
      const auto du = static_cast<std::size_t>(d);
      layout_.stages[du] = pr.stages_of(d);
      const std::vector<std::int32_t>& stages = layout_.stages[du];
      for (std::size_t k = 1; k < stages.size(); ++k)
        layout_.largest_later[du] =
            std::max(layout_.largest_later[du],
                     pr.memory.activation_bytes[static_cast<std::size_t>(stages[k])]);
      if (rules.inflight > 0) {
        const double natural =
            static_cast<double>(pr.stages - stages.front()) / static_cast<double>(stages.size());
        layout_.cap[du] = std::max<std::int32_t>(
            1, static_cast<std::int32_t>(std::ceil(rules.inflight * natural)));
      }
    }
  }

  std::optional<Order> run() {
    const std::size_t total = 3 * pr_.activations();
    std::size_t placed = 0;
    std::vector<std::int64_t> decide(device_.free);  // when each device decides next
    while (placed < total) {
      std::int32_t d = -1;
      for (std::int32_t k = 0; k < pr_.devices; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        if (order_[ku].size() == 3 * layout_.stages[ku].size() * static_cast<std::size_t>(m_))
          continue;
        if (decide[ku] == kUnknown) continue;
        if (d < 0 || decide[ku] < decide[static_cast<std::size_t>(d)]) d = k;
      }
      if (d < 0) return std::nullopt;  // every device waits for another: nothing can run
      const auto du = static_cast<std::size_t>(d);
      const std::int64_t t = std::max(decide[du], device_.free[du]);
      const Choice c = choose(d, t);
      if (c.kind == Choice::Wait) {
        decide[du] = c.ready;
        if (c.ready == kUnknown) {
          // Wake it when another device places an op (its inputs may then be known).
          waiting_.push_back(d);
        }
        if (c.stuck) return std::nullopt;
        continue;
      }
      place(d, c.step, std::max(t, c.ready));
      ++placed;
      decide[du] = device_.free[du];
      for (std::int32_t w : waiting_) {
        const auto wu = static_cast<std::size_t>(w);
        if (decide[wu] == kUnknown) decide[wu] = device_.free[wu];
      }
      waiting_.clear();
    }
    return order_;
  }

 private:
  struct Choice {
    enum Kind { Run, Wait } kind = Wait;
    Step step;
    std::int64_t ready = kUnknown;
    bool stuck = false;
  };

  std::size_t idx(std::int32_t s, std::int32_t j) const { return pr_.index(s, j); }
  std::size_t key(const Step& st) const {
    return static_cast<std::size_t>(st.kind) * pr_.activations() + idx(st.stage, st.microbatch);
  }
  /// Whether F(s, j) fits the device's memory now (with the reservation rule).
  bool forward_fits(std::int32_t d, std::int32_t s, std::int32_t j) const {
    const auto du = static_cast<std::size_t>(d);
    const auto su = static_cast<std::size_t>(s);
    const bool first = s == layout_.stages[du].front();
    std::int64_t after = device_.memory[du] + pr_.memory.activation_bytes[su];
    if (rules_.reserve_all) {
      after = first ? device_.memory[du] + device_.reserve[du] + pr_.memory.activation_bytes[su] +
                          later_forwards(d, s, j)
                    : device_.memory[du] + device_.reserve[du];
    } else if (first) {
      after += layout_.largest_later[du];
    }
    return after <= pr_.memory.limit_bytes[du];
  }

  /// Priority mode: the op listed first in the given order among those the device can run (the
  /// head of each stage's F's, B's and W's); a later-listed op that is ready now runs in the wait
  /// for it when it ends by then (or delays it by at most `w_slack` of its own duration).
  Choice choose_by_priority(std::int32_t d, std::int64_t t) {
    const auto du = static_cast<std::size_t>(d);
    struct ReadyOp {
      Step step;
      std::int64_t ready;
      std::int32_t rank;
    };
    std::vector<ReadyOp> cands;
    bool memory_blocked = false;
    for (std::int32_t s : layout_.stages[du]) {
      const auto su = static_cast<std::size_t>(s);
      const std::int32_t jb = done_.next_b[su], jf = done_.next_f[su];
      if (jb < jf) {
        const std::int64_t r = backward_ready(s, jb);
        if (r != kUnknown) cands.push_back({Step{StepKind::B, s, jb}, r, 0});
      }
      if (jf < m_) {
        const std::int64_t r = forward_ready(s, jf);
        const bool first = s == layout_.stages[du].front();
        if (r != kUnknown && !(first && device_.inflight[du] >= layout_.cap[du])) {
          if (forward_fits(d, s, jf)) {
            cands.push_back({Step{StepKind::F, s, jf}, r, 0});
          } else {
            memory_blocked = true;
          }
        }
      }
    }
    std::vector<char> stage_seen(static_cast<std::size_t>(pr_.stages), 0);
    for (const Step& w : done_.pending_w[du]) {
      if (stage_seen[static_cast<std::size_t>(w.stage)]) continue;
      stage_seen[static_cast<std::size_t>(w.stage)] = 1;
      cands.push_back({w, done_.b_end[idx(w.stage, w.microbatch)], 0});
    }
    if (cands.empty()) {
      Choice wait;
      wait.stuck = memory_blocked && next_b_open(d) == 0;
      return wait;
    }
    for (ReadyOp& c : cands) c.rank = rank_[key(c.step)];
    const ReadyOp* target = &cands.front();
    for (const ReadyOp& c : cands)
      if (c.rank < target->rank) target = &c;
    if (target->ready <= t) return Choice{Choice::Run, target->step, target->ready, false};
    const ReadyOp* filler = nullptr;
    for (const ReadyOp& c : cands) {
      if (c.ready > t) continue;
      const std::int64_t dur = pr_.duration(c.step.kind, c.step.stage);
      if (static_cast<double>(t + dur - target->ready) > rules_.w_slack * static_cast<double>(dur))
        continue;
      if (filler == nullptr || c.rank < filler->rank) filler = &c;
    }
    if (filler != nullptr) return Choice{Choice::Run, filler->step, filler->ready, false};
    Choice wait;
    wait.ready = target->ready;
    for (const ReadyOp& c : cands)
      if (c.ready > t) wait.ready = std::min(wait.ready, c.ready);
    return wait;
  }

  /// When F(s, j) can start (its input there), or kUnknown.
  std::int64_t forward_ready(std::int32_t s, std::int32_t j) const {
    return pr_.forward_ready(s, j, done_.f_end);
  }
  std::int64_t backward_ready(std::int32_t s, std::int32_t j) const {
    return pr_.backward_ready(s, j, done_.f_end, done_.b_end);
  }
  /// Bytes the device must keep free for F's of its later stages of microbatch j.
  std::int64_t later_forwards(std::int32_t d, std::int32_t s, std::int32_t j) const {
    std::int64_t r = 0;
    for (std::int32_t t : layout_.stages[static_cast<std::size_t>(d)])
      if (t > s && done_.f_end[idx(t, j)] < 0)
        r += pr_.memory.activation_bytes[static_cast<std::size_t>(t)];
    return r;
  }
  double jitter(std::int64_t scale) {
    if (random_ == nullptr || rules_.noise <= 0) return 0;
    return std::uniform_real_distribution<double>(0, rules_.noise)(*random_) *
           static_cast<double>(scale);
  }

  Choice choose(std::int32_t d, std::int64_t t) {
    if (!rank_.empty()) return choose_by_priority(d, t);
    const auto du = static_cast<std::size_t>(d);
    Choice best_b, best_f;
    double best_b_key = 0, best_f_key = 0;
    bool memory_blocked = false;
    for (std::int32_t s : layout_.stages[du]) {
      const auto su = static_cast<std::size_t>(s);
      const std::int32_t jb = done_.next_b[su];
      if (jb < done_.next_f[su]) {
        const std::int64_t r = backward_ready(s, jb);
        if (r != kUnknown) {
          // Oldest microbatch first, then the later stage; ready ones before waiting ones.
          const double key = static_cast<double>(std::max(r, t)) + jb * 1e-3 - s * 1e-6 +
                             jitter(pr_.backward_ps[su]);
          if (best_b.ready == kUnknown || key < best_b_key) {
            best_b = Choice{Choice::Run, Step{StepKind::B, s, jb}, r, false};
            best_b_key = key;
          }
        }
      }
      const std::int32_t jf = done_.next_f[su];
      if (jf < m_) {
        const std::int64_t r = forward_ready(s, jf);
        if (r == kUnknown) continue;
        const bool first = s == layout_.stages[du].front();
        if (first && device_.inflight[du] >= layout_.cap[du]) continue;
        // A first-stage F opens a microbatch on the device: it must also fit what the open ones
        // still reserve (or one later-stage F); a later-stage F is covered by its reservation.
        if (!forward_fits(d, s, jf)) {
          memory_blocked = true;
          continue;
        }
        const double key =
            static_cast<double>(std::max(r, t)) + jf * 1e-3 - s * 1e-6 + jitter(pr_.forward_ps[su]);
        if (best_f.ready == kUnknown || key < best_f_key) {
          best_f = Choice{Choice::Run, Step{StepKind::F, s, jf}, r, false};
          best_f_key = key;
        }
      }
    }
    const bool has_w = !done_.pending_w[du].empty();
    const Choice* first = &best_b;
    const Choice* second = &best_f;
    if (rules_.forward_before_backward) std::swap(first, second);
    auto ready_now = [&](const Choice& c) { return c.ready != kUnknown && c.ready <= t; };
    if (ready_now(*first)) return *first;
    if (ready_now(*second)) return *second;
    std::int64_t next = std::min(best_b.ready, best_f.ready);
    if (has_w) {
      const Step w = done_.pending_w[du].front();
      const std::int64_t tw = pr_.weight_ps[static_cast<std::size_t>(w.stage)];
      const bool fits = next == kUnknown || static_cast<double>(t + tw - next) <=
                                                rules_.w_slack * static_cast<double>(tw);
      if (fits || (memory_blocked && best_b.ready == kUnknown)) {
        return Choice{Choice::Run, w, t, false};
      }
    }
    Choice wait;
    wait.ready = next;
    // Nothing ready and nothing known: stuck only if the device waits on its own memory.
    wait.stuck = next == kUnknown && memory_blocked && !has_w && next_b_open(d) == 0;
    return wait;
  }

  /// B's the device can still run (their F done).
  std::int32_t next_b_open(std::int32_t d) const {
    std::int32_t n = 0;
    for (std::int32_t s : layout_.stages[static_cast<std::size_t>(d)])
      n += done_.next_f[static_cast<std::size_t>(s)] - done_.next_b[static_cast<std::size_t>(s)];
    return n;
  }

  void place(std::int32_t d, Step st, std::int64_t start) {
    const auto du = static_cast<std::size_t>(d);
    const auto su = static_cast<std::size_t>(st.stage);
    const std::int64_t end = start + pr_.duration(st.kind, st.stage);
    device_.free[du] = end;
    order_[du].push_back(st);
    const std::size_t i = idx(st.stage, st.microbatch);
    switch (st.kind) {
      case StepKind::F: {
        const bool first = st.stage == layout_.stages[du].front();
        if (first) ++device_.inflight[du];
        if (rules_.reserve_all) {
          if (first) {
            device_.reserve[du] += later_forwards(d, st.stage, st.microbatch);
          } else {
            device_.reserve[du] -= pr_.memory.activation_bytes[su];
          }
        }
        device_.memory[du] += pr_.memory.activation_bytes[su];
        done_.f_end[i] = end;
        ++done_.next_f[su];
        break;
      }
      case StepKind::B:
        device_.memory[du] += pr_.memory_delta(StepKind::B, st.stage);
        done_.b_end[i] = end;
        ++done_.next_b[su];
        done_.pending_w[du].push_back(Step{StepKind::W, st.stage, st.microbatch});
        break;
      case StepKind::W:
        device_.memory[du] += pr_.memory_delta(StepKind::W, st.stage);
        done_.pending_w[du].erase(
            std::find(done_.pending_w[du].begin(), done_.pending_w[du].end(), st));
        if (st.stage == layout_.stages[du].front()) --device_.inflight[du];
        break;
      default:
        break;
    }
  }

  /// What each device holds, fixed for the run.
  struct Layout {
    std::vector<std::vector<std::int32_t>> stages;  // its stages, in increasing order
    std::vector<std::int32_t> cap;  // most microbatches open on its first stage (inflight rule)
    std::vector<std::int64_t> largest_later;  // largest M_B among its later stages
  };
  /// Which ops have been placed: per activation F and B end times (-1: not yet), per stage the
  /// next F and B microbatch, per device the W's whose B ran.
  struct Placed {
    std::vector<std::int64_t> f_end, b_end;
    std::vector<std::int32_t> next_f, next_b;
    std::vector<std::deque<Step>> pending_w;
  };
  /// Per device: when it is free, its activation memory, what its open microbatches still
  /// reserve for their later-stage F's, and how many microbatches are open on its first stage.
  struct DeviceState {
    std::vector<std::int64_t> free, memory, reserve;
    std::vector<std::int32_t> inflight;
  };

  const Problem& pr_;
  GreedyRules rules_;
  std::mt19937_64* random_;
  std::int32_t m_;
  Layout layout_;
  Placed done_;
  DeviceState device_;
  std::vector<std::int32_t> waiting_;
  std::vector<std::int32_t> rank_;  // priority mode: position of every F, B, W in the given order
  Order order_;
};

}  // namespace

std::optional<Order> greedy_schedule(const Problem& problem, const GreedyRules& rules,
                                     std::mt19937_64* random) {
  if (problem.devices < 1 || problem.microbatches < 1) return std::nullopt;
  return Greedy(problem, rules, random).run();
}

std::optional<Order> compact(const Problem& problem, const Order& order, const GreedyRules& rules) {
  if (problem.devices < 1 || problem.microbatches < 1) return std::nullopt;
  return Greedy(problem, rules, nullptr, &order).run();
}

std::vector<GreedyRules> greedy_rule_set() {
  std::vector<GreedyRules> out;
  for (bool all : {true, false})
    for (double inflight : {0.0, 1.0, 1.5, 2.0})
      for (double slack : {0.0, 0.5, 1.0}) out.push_back(GreedyRules{inflight, slack, false, all});
  out.push_back(GreedyRules{0.0, 0.0, true, true});
  out.push_back(GreedyRules{1.0, 1.0, true, true});
  return out;
}

}  // namespace bubblesim::optimizer
