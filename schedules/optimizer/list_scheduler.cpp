#include "schedules/optimizer/list_scheduler.h"

#include <algorithm>

namespace bubblesim::optimizer {
namespace {

class Placer {
 public:
  Placer(const Problem& problem, const ListFlags& flags)
      : pr_(problem), flags_(flags), p_(problem.devices), m_(problem.microbatches) {
    const auto pu = static_cast<std::size_t>(p_);
    count_.assign(kStepKinds, std::vector<std::int32_t>(pu, 0));
    end_.assign(kStepKinds, std::vector<std::int64_t>(pu * static_cast<std::size_t>(m_), 0));
    last_.assign(pu, 0);
    memory_.assign(pu, 0);
    bubble_.assign(pu, 0);
    order_.assign(pu, {});
  }

  std::optional<Order> run() {
    const std::int32_t p = p_, m = m_;
    // Microbatch 0 through every stage, then the extra warm-up forwards.
    for (std::int32_t j = 0; j < p; ++j) put(j, StepKind::F);
    std::vector<std::int32_t> extra(static_cast<std::size_t>(p), 0);
    std::int64_t arrival = 0;
    for (std::int32_t j = p - 1; j >= 0; --j) {
      if (j == p - 1) {
        arrival = end(StepKind::F, j, 0) + pr_.duration(StepKind::B, j);
        continue;
      }
      std::int64_t mem = memory(j), time = last(j);
      auto& x = extra[static_cast<std::size_t>(j)];
      while (count(StepKind::F, j) + x < m && mem + pr_.memory_delta(StepKind::F, j) <= limit(j)) {
        const std::int64_t tf = pr_.duration(StepKind::F, j);
        if (flags_.allow_bubble_before_first_b ? time + tf > arrival + pr_.backward_delay(j)
                                               : time >= arrival + pr_.backward_delay(j))
          break;
        mem += pr_.memory_delta(StepKind::F, j);
        time += tf;
        ++x;
      }
      arrival = std::max(time, arrival + pr_.backward_delay(j)) + pr_.duration(StepKind::B, j);
    }
    for (std::int32_t j = 1; j < p; ++j) {
      auto& x = extra[static_cast<std::size_t>(j)];
      while (x > 0 && x >= extra[static_cast<std::size_t>(j - 1)] && count(StepKind::F, j) + x < m)
        --x;
    }
    for (std::int32_t j = 0; j < p; ++j)
      for (std::int32_t k = 0; k < extra[static_cast<std::size_t>(j)]; ++k) put(j, StepKind::F);
    for (std::int32_t j = p - 1; j >= 0; --j) {
      if (!make_room(j, StepKind::B)) return std::nullopt;
      put(j, StepKind::B);
    }

    for (std::int32_t i = 1; i < m; ++i) {
      std::vector<char> forward(static_cast<std::size_t>(p), 0);
      for (std::int32_t j = 0; j < p; ++j)
        forward[static_cast<std::size_t>(j)] = wants_forward(j) ? 1 : 0;
      for (std::int32_t j = p - 2; j >= 0; --j)
        forward[static_cast<std::size_t>(j)] = std::min(forward[static_cast<std::size_t>(j)],
                                                        forward[static_cast<std::size_t>(j + 1)]);
      for (std::int32_t j = 0; j < p; ++j) {
        if (!forward[static_cast<std::size_t>(j)]) continue;
        if (!make_room(j, StepKind::F)) return std::nullopt;
        if (j > 0)
          fill_weights(j,
                       end(StepKind::F, j - 1, count(StepKind::F, j)) + pr_.forward_delay(j - 1));
        put(j, StepKind::F);
      }
      for (std::int32_t j = p - 1; j >= 0; --j) {
        if (count(StepKind::B, j) >= count(StepKind::F, j))
          return std::nullopt;  // its F was skipped
        if (!make_room(j, StepKind::B)) return std::nullopt;
        if (j + 1 < p) fill_weights(j, end(StepKind::B, j + 1, i) + pr_.backward_delay(j));
        if (j == 0 && count(StepKind::F, j) == m)
          while (count(StepKind::W, j) < count(StepKind::B, j)) put(j, StepKind::W);
        put(j, StepKind::B);
      }
    }
    for (std::int32_t j = 0; j < p; ++j)
      while (count(StepKind::W, j) < m) put(j, StepKind::W);
    return order_;
  }

 private:
  std::int32_t count(StepKind k, std::int32_t j) const {
    return count_[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
  }
  std::int64_t end(StepKind k, std::int32_t j, std::int32_t i) const {
    return end_[static_cast<std::size_t>(k)][pr_.index(j, i)];
  }
  std::int64_t last(std::int32_t j) const { return last_[static_cast<std::size_t>(j)]; }
  std::int64_t memory(std::int32_t j) const { return memory_[static_cast<std::size_t>(j)]; }
  std::int64_t limit(std::int32_t j) const {
    return pr_.memory.limit_bytes[static_cast<std::size_t>(j)];
  }
  std::int64_t max_bubble() const { return *std::max_element(bubble_.begin(), bubble_.end()); }
  bool weight_pending(std::int32_t j) const {
    return count(StepKind::W, j) < count(StepKind::B, j);
  }

  void put(std::int32_t j, StepKind k) {
    const auto ju = static_cast<std::size_t>(j);
    const std::int32_t i = count(k, j);
    const std::int64_t cost = pr_.duration(k, j);
    const std::int64_t no_wait = last_[ju] + cost;
    std::int64_t e = no_wait;
    if (k == StepKind::F && j > 0)
      e = std::max(e, end(StepKind::F, j - 1, i) + pr_.forward_delay(j - 1) + cost);
    if (k == StepKind::B && j + 1 < p_)
      e = std::max(e, end(StepKind::B, j + 1, i) + pr_.backward_delay(j) + cost);
    if (count(StepKind::F, j) > 0) bubble_[ju] += e - no_wait;
    last_[ju] = e;
    end_[static_cast<std::size_t>(k)][pr_.index(j, i)] = e;
    memory_[ju] += pr_.memory_delta(k, j);
    ++count_[static_cast<std::size_t>(k)][ju];
    order_[ju].push_back(Step{k, j, i});
  }

  /// Places W's until the next op of kind k fits the limit; false when none is left to place.
  bool make_room(std::int32_t j, StepKind k) {
    while (memory(j) + std::max<std::int64_t>(0, pr_.memory_delta(k, j)) > limit(j)) {
      if (!weight_pending(j)) return false;
      put(j, StepKind::W);
    }
    return true;
  }

  /// Places W's that end before `target`, then possibly one more into the remaining wait.
  void fill_weights(std::int32_t j, std::int64_t target) {
    while (weight_pending(j) && last(j) + pr_.duration(StepKind::W, j) <= target)
      put(j, StepKind::W);
    if (weight_pending(j) && last(j) < target) {
      if (target - last(j) <= max_bubble() - bubble_[static_cast<std::size_t>(j)]) {
        if (flags_.no_bubble_greedy) put(j, StepKind::W);
      } else {
        put(j, StepKind::W);
      }
    }
  }

  /// Step 2a of the heuristic: does stage j place an F this round?
  bool wants_forward(std::int32_t j) const {
    if (count(StepKind::F, j) >= m_) return false;
    if (!flags_.prioritize_b || j + 1 >= p_ ||
        count(StepKind::F, j) < count(StepKind::F, j + 1) + 2)
      return true;
    const std::int64_t next = last(j + 1) + pr_.duration(StepKind::F, j + 1) +
                              pr_.duration(StepKind::B, j + 1) + pr_.backward_delay(j);
    if (last(j) >= next) return false;
    std::int64_t mem = memory(j) + pr_.memory_delta(StepKind::F, j), w_cost = 0;
    for (std::int32_t w = count(StepKind::W, j); mem > limit(j) && w < count(StepKind::B, j); ++w) {
      w_cost += pr_.duration(StepKind::W, j);
      mem += pr_.memory_delta(StepKind::W, j);
    }
    if (last(j) + pr_.duration(StepKind::F, j) + w_cost <= next) return true;
    return next - last(j) > max_bubble() - bubble_[static_cast<std::size_t>(j)];
  }

  const Problem& pr_;
  ListFlags flags_;
  std::int32_t p_, m_;
  std::vector<std::vector<std::int32_t>> count_;
  std::vector<std::vector<std::int64_t>> end_;
  std::vector<std::int64_t> last_, memory_, bubble_;
  Order order_;
};

}  // namespace

std::optional<Order> list_schedule(const Problem& problem, const ListFlags& flags) {
  if (problem.placement != PlacementKind::Straight || problem.devices < 1 ||
      problem.microbatches < 1)
    return std::nullopt;
  return Placer(problem, flags).run();
}

std::vector<ListFlags> all_list_flags() {
  std::vector<ListFlags> out;
  for (bool a : {true, false})
    for (bool b : {true, false})
      for (bool c : {true, false}) out.push_back(ListFlags{a, b, c});
  return out;
}

}  // namespace bubblesim::optimizer
