#include "schedules/optimizer/building_blocks.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <utility>

#include "schedules/optimizer/cool_down.h"
#include "schedules/optimizer/greedy.h"
#include "schedules/optimizer/timing_model.h"
#include "schedules/optimizer/warm_up.h"

namespace bubblesim::optimizer {
namespace {

// Pattern positions (slots mod 6) of the six ops of one device: F and B of chunk 0 (stage d), F
// and B of chunk 1 (stage 2p-1-d), and the two W's.
enum Slot { kF0 = 0, kF1, kB1, kB0, kW1, kW0 };
using Pattern = std::array<int, 6>;
constexpr int kPeriod = 6;

int mod6(int x) { return ((x % kPeriod) + kPeriod) % kPeriod; }

/// Puts each W in the first free slot after its B; false when the four given slots collide.
bool fill_weights(Pattern& pat) {
  std::array<bool, kPeriod> used{};
  for (int k : {kF0, kF1, kB1, kB0}) {
    if (used[static_cast<std::size_t>(pat[static_cast<std::size_t>(k)])]) return false;
    used[static_cast<std::size_t>(pat[static_cast<std::size_t>(k)])] = true;
  }
  for (auto [b, w] : {std::pair{kB1, kW1}, std::pair{kB0, kW0}}) {
    for (int j = 1; j < kPeriod; ++j) {
      const int at = mod6(pat[static_cast<std::size_t>(b)] + j);
      if (!used[static_cast<std::size_t>(at)]) {
        pat[static_cast<std::size_t>(w)] = at;
        used[static_cast<std::size_t>(at)] = true;
        break;
      }
    }
  }
  return true;
}

struct Candidate {
  std::int64_t slot_bubble = 0;
  Order order;
};

/// The V order of one building block (device 0's pattern, offset k0 for the first `len0` device
/// transitions and k1 for the rest), or nothing when two ops of a device collide.
bool build(const Problem& pr, const Pattern& first, int k0, int k1, int len0, Candidate& out) {
  const std::int32_t p = pr.devices, m = pr.microbatches;
  std::vector<Pattern> pat(static_cast<std::size_t>(p));
  pat[0] = first;
  for (std::int32_t d = 0; d + 1 < p; ++d) {
    const int k = d < len0 ? k0 : k1;
    Pattern next{};
    const Pattern& prev = pat[static_cast<std::size_t>(d)];
    next[kF0] = mod6(prev[kF0] + k);
    next[kF1] = mod6(prev[kF1] - 1);
    next[kB1] = mod6(prev[kB1] + k);
    next[kB0] = mod6(prev[kB0] - 1);
    if (!fill_weights(next)) return false;
    pat[static_cast<std::size_t>(d + 1)] = next;
  }
  // Absolute slots of microbatch 0.
  const auto pu = static_cast<std::size_t>(p);
  std::vector<std::array<std::int64_t, 6>> at(pu);
  auto gap = [&](std::size_t d, int from, int to) {
    return mod6(pat[d][static_cast<std::size_t>(to)] - pat[d][static_cast<std::size_t>(from)]);
  };
  at[0][kF0] = 0;
  for (std::size_t d = 1; d < pu; ++d)
    at[d][kF0] = at[d - 1][kF0] + (static_cast<std::int32_t>(d) - 1 < len0 ? k0 : k1);
  at[pu - 1][kF1] = at[pu - 1][kF0] + gap(pu - 1, kF0, kF1);
  for (std::size_t d = pu - 1; d-- > 0;) at[d][kF1] = at[d + 1][kF1] + 1;
  at[0][kB1] = at[0][kF1] + gap(0, kF1, kB1);
  for (std::size_t d = 1; d < pu; ++d)
    at[d][kB1] = at[d - 1][kB1] + (static_cast<std::int32_t>(d) - 1 < len0 ? k0 : k1);
  at[pu - 1][kB0] = at[pu - 1][kB1] + gap(pu - 1, kB1, kB0);
  for (std::size_t d = pu - 1; d-- > 0;) at[d][kB0] = at[d + 1][kB0] + 1;
  out.order.assign(pu, {});
  out.slot_bubble = 0;
  for (std::size_t d = 0; d < pu; ++d) {
    at[d][kW1] = at[d][kB1] + gap(d, kB1, kW1);
    at[d][kW0] = at[d][kB0] + gap(d, kB0, kW0);
    const auto s0 = static_cast<std::int32_t>(d), s1 = 2 * p - 1 - static_cast<std::int32_t>(d);
    const std::array<Step, 6> kinds{Step{StepKind::F, s0, 0}, Step{StepKind::F, s1, 0},
                                    Step{StepKind::B, s1, 0}, Step{StepKind::B, s0, 0},
                                    Step{StepKind::W, s1, 0}, Step{StepKind::W, s0, 0}};
    std::vector<std::pair<std::int64_t, Step>> slots;
    slots.reserve(6 * static_cast<std::size_t>(m));
    for (std::int32_t j = 0; j < m; ++j) {
      for (std::size_t k = 0; k < 6; ++k) {
        Step st = kinds[k];
        st.microbatch = j;
        slots.emplace_back(at[d][k] + kPeriod * static_cast<std::int64_t>(j), st);
      }
    }
    std::sort(slots.begin(), slots.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& s : slots) out.order[d].push_back(s.second);
    out.slot_bubble = std::max(out.slot_bubble, slots.back().first - slots.front().first + 1 -
                                                    6 * static_cast<std::int64_t>(m));
  }
  return true;
}

/// Whether every device's order stays within its limit (one op at a time: the sum of deltas).
bool fits(const Problem& pr, const Order& order) {
  for (std::size_t d = 0; d < order.size(); ++d) {
    std::int64_t memory = 0;
    for (const Step& st : order[d]) {
      memory += pr.memory_delta(st.kind, st.stage);
      if (memory > pr.memory.limit_bytes[d]) return false;
    }
  }
  return true;
}

}  // namespace

BlockOrders building_block_orders(const Problem& problem, std::size_t keep,
                                  Clock::time_point deadline) {
  if (problem.placement != PlacementKind::V || problem.devices < 1 || problem.microbatches < 1)
    return {};
  std::vector<Candidate> fitting, others;
  std::set<std::uint64_t> seen;
  for (int f1 = 1; f1 < kPeriod; ++f1) {
    for (int b1 = 1; b1 < kPeriod; ++b1) {
      for (int b0 = 1; b0 < kPeriod; ++b0) {
        Pattern first{0, f1, b1, b0, 0, 0};
        if (!fill_weights(first)) continue;
        for (int k0 = 1; k0 < kPeriod && !passed(deadline); ++k0) {
          for (int k1 = 1; k1 <= k0; ++k1) {
            for (int len0 = 1; len0 < std::max(2, problem.devices); ++len0) {
              Candidate c;
              if (!build(problem, first, k0, k1, len0, c)) continue;
              // One key per distinct order: a hash of its ops' kinds and stages in sequence.
              std::uint64_t key = 1469598103934665603ULL;
              for (const auto& ops : c.order) {
                for (const Step& st : ops) {
                  key ^= static_cast<std::uint64_t>(static_cast<int>(st.kind) * 65536 + st.stage);
                  key *= 1099511628211ULL;
                }
                key ^= 0xff;
                key *= 1099511628211ULL;
              }
              if (!seen.insert(key).second) continue;
              (fits(problem, c.order) ? fitting : others).push_back(std::move(c));
            }
          }
        }
      }
    }
  }
  // Rank by the replayed cost of the order closed up by priority (the raw order's slots keep the
  // warm-up's spacing, which the replay and the compaction remove).
  TimingModel model(problem);
  GreedyRules rules;  // reserve room for every open microbatch's later F, no slack
  struct Ranked {
    std::int64_t cost;
    std::size_t index;  // into variants
  };
  std::vector<Ranked> ranked, ranked_repaired;
  std::vector<Order> variants;
  auto add = [&](Order o, std::vector<Ranked>& to) {
    to.push_back({model.cost(o), variants.size()});
    variants.push_back(std::move(o));
  };
  std::vector<Order> raw;  // the blocks' own orders, to repair
  for (Candidate& c : fitting) {
    if (passed(deadline)) break;
    std::optional<Order> closed = compact(problem, c.order, rules);
    raw.push_back(c.order);
    add(std::move(c.order), ranked);
    if (closed) add(std::move(*closed), ranked);
  }
  // The repaired ones: the block's own order with its warm-up repacked (warm_up.h), then its
  // cool-down rebuilt (cool_down.h).
  for (const Order& o : raw) {
    if (passed(deadline)) break;
    std::optional<Order> packed = repack_warm_up(problem, o);
    if (!packed) continue;
    if (std::optional<Order> rebuilt = rebuild_cool_down(problem, *packed)) {
      add(std::move(*rebuilt), ranked_repaired);
    }
  }
  BlockOrders out;
  auto best = [&](std::vector<Ranked>& r, std::vector<Order>& to) {
    std::stable_sort(r.begin(), r.end(),
                     [](const Ranked& x, const Ranked& y) { return x.cost < y.cost; });
    for (std::size_t i = 0; i < r.size() && to.size() < keep; ++i) {
      if (r[i].cost >= TimingModel::kInfeasible) break;
      to.push_back(variants[r[i].index]);
    }
  };
  best(ranked, out.plain);
  best(ranked_repaired, out.repaired);
  if (problem.memory_ops_allowed()) {
    std::stable_sort(others.begin(), others.end(), [](const Candidate& a, const Candidate& b) {
      return a.slot_bubble < b.slot_bubble;
    });
    for (std::size_t i = 0; i < others.size() && i < keep; ++i)
      out.plain.push_back(std::move(others[i].order));
  }
  return out;
}

}  // namespace bubblesim::optimizer
