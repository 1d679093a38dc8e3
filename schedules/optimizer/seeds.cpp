#include "schedules/optimizer/seeds.h"

#include <algorithm>
#include <set>
#include <utility>

#include "schedules/optimizer/building_blocks.h"
#include "schedules/optimizer/greedy.h"
#include "schedules/optimizer/list_scheduler.h"

namespace bubblesim::optimizer {

Order handcrafted_order(std::int32_t p, std::int32_t m, std::int32_t warmup_extra_factor,
                        std::int32_t rounds_factor) {
  Order order(static_cast<std::size_t>(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = order[static_cast<std::size_t>(r)];
    std::int32_t f = 0, b = 0, w = 0;
    // warm-up: (p - r) for factor 1, 2(p - r) - 1 for factor 2
    const std::int32_t warmup =
        std::min(m, warmup_extra_factor * (p - r) - (warmup_extra_factor - 1));
    while (f < warmup) ops.push_back({StepKind::F, r, f++});
    for (std::int32_t k = 0; k < rounds_factor * r && f < m; ++k) {
      ops.push_back({StepKind::B, r, b++});
      ops.push_back({StepKind::F, r, f++});
    }
    while (f < m) {
      ops.push_back({StepKind::B, r, b++});
      ops.push_back({StepKind::W, r, w++});
      ops.push_back({StepKind::F, r, f++});
    }
    while (b < m) {
      ops.push_back({StepKind::B, r, b++});
      ops.push_back({StepKind::W, r, w++});
    }
    while (w < m) ops.push_back({StepKind::W, r, w++});
  }
  return order;
}

Order zb_v_order(std::int32_t p, std::int32_t m) {
  Order order(static_cast<std::size_t>(p));
  const std::int32_t n = std::max(2 * p - 1, m);
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = order[static_cast<std::size_t>(r)];
    const std::int32_t s0 = r, s1 = 2 * p - 1 - r;
    std::int32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    auto emit = [&](StepKind k, std::int32_t s, std::int32_t j) {
      if (j < m) ops.push_back({k, s, j});  // padding microbatches are idle slots
    };
    for (std::int32_t k = 0; k < 2 * (p - r) - 1; ++k) emit(StepKind::F, s0, f0++);
    for (std::int32_t k = 0; k < r; ++k) {
      emit(StepKind::F, s1, f1++);
      emit(StepKind::F, s0, f0++);
    }
    for (std::int32_t k = 0; k < p - r; ++k) {
      emit(StepKind::F, s1, f1++);
      emit(StepKind::B, s1, b1);
      emit(StepKind::W, s1, b1++);
    }
    while (f1 < f0 || f0 < n) {
      if (f0 < n) emit(StepKind::F, s0, f0++);
      emit(StepKind::B, s0, b0);
      emit(StepKind::W, s0, b0++);
      emit(StepKind::F, s1, f1++);
      emit(StepKind::B, s1, b1);
      emit(StepKind::W, s1, b1++);
    }
    std::int32_t w0 = b0, w1 = b1;
    for (std::int32_t k = 0; k < r; ++k) {
      emit(StepKind::B, s0, b0++);
      emit(StepKind::B, s1, b1++);
    }
    for (std::int32_t k = 0; k < p - r; ++k) {
      emit(StepKind::B, s0, b0++);
      emit(StepKind::W, s0, w0++);
    }
    while (w1 < b1) emit(StepKind::W, s1, w1++);
    while (w0 < b0) emit(StepKind::W, s0, w0++);
  }
  return order;
}

Order interleaved_order(std::int32_t p, std::int32_t m, std::int32_t group, std::int32_t lead) {
  constexpr std::int32_t kChunks = 2;
  const std::int32_t total = kChunks * m;
  // A device's k-th forward: the group k / (2 group), its chunk (k / group) mod 2 (backward: the
  // other way round), microbatch group (k / (2 group)) + k mod group; past m: skipped.
  std::vector<std::pair<std::int32_t, std::int32_t>> forward, backward;  // (chunk, microbatch)
  for (std::int32_t k = 0; static_cast<std::int32_t>(forward.size()) < total; ++k) {
    const std::int32_t within = k % (kChunks * group);
    const std::int32_t c = within / group, j = k / (kChunks * group) * group + within % group;
    if (j >= m) continue;
    forward.emplace_back(c, j);
    backward.emplace_back(kChunks - 1 - c, j);
  }
  Order order(static_cast<std::size_t>(p));
  for (std::int32_t d = 0; d < p; ++d) {
    auto& ops = order[static_cast<std::size_t>(d)];
    auto emit = [&](StepKind k, std::pair<std::int32_t, std::int32_t> cj) {
      ops.push_back({k, cj.first * p + d, cj.second});
      if (k == StepKind::B) ops.push_back({StepKind::W, cj.first * p + d, cj.second});
    };
    const std::int32_t warmup = std::min(total, (p - d - 1) * lead + (kChunks - 1) * group);
    const auto at = [](std::int32_t k) { return static_cast<std::size_t>(k); };
    for (std::int32_t k = 0; k < warmup; ++k) emit(StepKind::F, forward[at(k)]);
    for (std::int32_t k = 0; k < total; ++k) {
      if (warmup + k < total) emit(StepKind::F, forward[at(warmup + k)]);
      emit(StepKind::B, backward[at(k)]);
    }
  }
  return order;
}

namespace {

void list_seeds(const Problem& problem, std::vector<Seed>& out) {
  const std::int32_t p = problem.devices, m = problem.microbatches;
  // List scheduling at the limit and at smaller limits (multiples of p M_B below it), so a larger
  // budget never has fewer candidates than a smaller one. With offload or recompute the order may
  // hold more than the limit (fit_memory makes room), so larger limits are tried too.
  const bool larger = problem.memory_ops_allowed();
  std::set<std::int64_t> quarters;  // limit scale factors in quarters of p M_B
  for (std::int64_t q = 4; q <= 4 * 4; q += 2) quarters.insert(q);
  if (larger) quarters.insert({5, 7, 9, 20, 24, 32});
  std::vector<std::vector<std::int64_t>> limits{problem.memory.limit_bytes};
  for (std::int64_t q : quarters) {
    std::vector<std::int64_t> lim(problem.memory.limit_bytes.size());
    bool smaller = true;
    for (std::size_t s = 0; s < lim.size(); ++s) {
      lim[s] = q * p * problem.memory.activation_bytes[s] / 4;
      if (lim[s] >= problem.memory.limit_bytes[s]) smaller = false;
    }
    if (smaller || larger) limits.push_back(lim);
  }
  if (larger) {
    std::vector<std::int64_t> unlimited(problem.memory.limit_bytes.size());
    for (std::size_t s = 0; s < unlimited.size(); ++s)
      unlimited[s] = m * problem.memory.activation_bytes[s];
    limits.push_back(unlimited);
  }
  const auto flags = all_list_flags();
  for (std::size_t li = 0; li < limits.size(); ++li) {
    Problem limited = problem;
    limited.memory.limit_bytes = limits[li];
    for (std::size_t fi = 0; fi < flags.size(); ++fi) {
      if (auto order = list_schedule(limited, flags[fi])) {
        out.push_back({"list(limit " + std::to_string(li) + ", flags " + std::to_string(fi) + ")",
                       std::move(*order), false, li == 0});
      }
    }
  }
}

void greedy_seeds(const Problem& problem, std::vector<Seed>& out) {
  const std::vector<GreedyRules> rules = greedy_rule_set();
  // With offload or recompute, also without the limit (fit_memory makes room).
  std::vector<Problem> variants{problem};
  if (problem.memory_ops_allowed()) {
    Problem unlimited = problem;
    for (auto& l : unlimited.memory.limit_bytes) l = std::numeric_limits<std::int64_t>::max() / 8;
    variants.push_back(unlimited);
  }
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t k = 0; k < rules.size(); ++k) {
      if (auto order = greedy_schedule(variants[v], rules[k])) {
        out.push_back(
            {"greedy(" + std::to_string(k) + (v > 0 ? ", unlimited)" : ")"), std::move(*order)});
      }
    }
  }
}

/// `order` with every W moved right after its B: the order's W's as early as they can go.
Order eager_weights(const Order& order) {
  Order out(order.size());
  for (std::size_t d = 0; d < order.size(); ++d) {
    out[d].reserve(order[d].size());
    for (const Step& st : order[d]) {
      if (st.kind == StepKind::W) continue;
      out[d].push_back(st);
      if (st.kind == StepKind::B) out[d].push_back(Step{StepKind::W, st.stage, st.microbatch});
    }
  }
  return out;
}

/// With offload, every seed (but those in [skip_begin, skip_end)) also with its W's right after
/// their B's. Offload only frees an
/// activation before its B; after the B it holds M_W until its W, which no copy frees, so a seed
/// that defers W's (ZB-V, the building blocks) may not fit however much it offloads, while the
/// same order with eager W's does (measured: ZB-V at p = 8, m = 16, half of 1F1B's memory, fits
/// with 95 activations offloaded at a 0.4% longer span, and no deferred-W order fits at all).
void eager_weight_seeds(std::vector<Seed>& out, std::size_t skip_begin, std::size_t skip_end) {
  const std::size_t n = out.size();
  std::set<Order> seen;
  for (std::size_t k = 0; k < n; ++k) seen.insert(out[k].order);
  for (std::size_t k = 0; k < n; ++k) {
    if (k >= skip_begin && k < skip_end) continue;
    Order eager = eager_weights(out[k].order);
    if (!seen.insert(eager).second) continue;
    out.push_back({out[k].name + ", W after B", std::move(eager)});
  }
}

}  // namespace

std::vector<Seed> seed_orders(const Problem& problem, Clock::time_point deadline) {
  std::vector<Seed> out;
  const std::int32_t p = problem.devices, m = problem.microbatches;
  BlockOrders blocks;
  std::size_t list_begin = 0, list_end = 0;
  if (problem.placement == PlacementKind::Straight) {
    out.push_back({"1f1b-split", handcrafted_order(p, m, 1, 0)});
    out.push_back({"zb-h1", handcrafted_order(p, m, 1, 1)});
    out.push_back({"zb-h2", handcrafted_order(p, m, 2, 2)});
    list_begin = out.size();
    list_seeds(problem, out);
    list_end = out.size();
  } else if (problem.placement == PlacementKind::Interleaved) {
    for (const std::int32_t g : {p, (p + 1) / 2}) {
      for (const std::int32_t lead : {2, 1}) {
        out.push_back(
            {"interleaved 1f1b(group " + std::to_string(g) + ", lead " + std::to_string(lead) + ")",
             interleaved_order(p, m, g, lead)});
      }
      if (p == 1) break;
    }
  } else {
    out.push_back({"zb-v", zb_v_order(p, m)});
    blocks = building_block_orders(problem, 12, deadline);
    for (std::size_t k = 0; k < blocks.plain.size(); ++k)
      out.push_back({"building block " + std::to_string(k), std::move(blocks.plain[k])});
  }
  greedy_seeds(problem, out);
  for (std::size_t k = 0; k < blocks.repaired.size(); ++k)
    out.push_back({"repaired building block " + std::to_string(k), std::move(blocks.repaired[k]),
                   true, false});
  // Not the list scheduler's many seeds: with offload it already tries larger limits, and fitting
  // their variants too would double the search's start (p = 16, m = 128).
  if (problem.memory_ops.allow_offload) eager_weight_seeds(out, list_begin, list_end);
  return out;
}

}  // namespace bubblesim::optimizer
