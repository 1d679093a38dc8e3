#include "sim/scenario/scenario.h"

#include <algorithm>

namespace bubblesim {

std::optional<Bytes> memory_budget_of_device(const MemorySpec& memory, std::int32_t d) {
  if (memory.budget.empty()) return std::nullopt;
  if (memory.budget.size() == 1) return memory.budget.front();
  return memory.budget.at(static_cast<std::size_t>(d));
}

std::size_t ParallelismSpec::rank_index(std::int32_t stages, std::int32_t s, std::int32_t r,
                                        std::int32_t t, std::int32_t c) const {
  // With `ep` in the order, dp rank r is expert-parallel rank r mod ep (placed at `ep`) of
  // replica group r / ep (placed at `dp`); without it the ep ranks are consecutive dp ranks.
  const bool ep_placed = std::find(order.begin(), order.end(), "ep") != order.end();
  const std::int32_t e = ep_placed ? std::max(ep, 1) : 1;
  std::size_t index = 0, stride = 1;
  for (const std::string& dim : order) {
    const std::int32_t size = dim == "tp"   ? tp
                              : dim == "cp" ? cp
                              : dim == "dp" ? dp / e
                              : dim == "ep" ? e
                                            : stages;
    const std::int32_t coord = dim == "tp"   ? t
                               : dim == "cp" ? c
                               : dim == "dp" ? r / e
                               : dim == "ep" ? r % e
                                             : s;
    index += static_cast<std::size_t>(coord) * stride;
    stride *= static_cast<std::size_t>(size);
  }
  return index;
}

std::vector<std::size_t> ParallelismSpec::expert_group(std::int32_t stages, std::int32_t s,
                                                       std::int32_t e) const {
  std::vector<std::size_t> group;
  for (std::int32_t r = e; r < dp; r += std::max(ep, 1))
    for (std::int32_t t = 0; t < tp; ++t) group.push_back(rank_index(stages, s, r, t));
  return group;
}

}  // namespace bubblesim
