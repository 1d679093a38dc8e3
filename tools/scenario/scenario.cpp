#include "tools/scenario/scenario.h"

namespace bubblesim {

std::optional<Bytes> memory_budget_of_device(const MemorySpec& memory, std::int32_t d) {
  if (memory.budget.empty()) return std::nullopt;
  if (memory.budget.size() == 1) return memory.budget.front();
  return memory.budget.at(static_cast<std::size_t>(d));
}

std::size_t ParallelismSpec::rank_index(std::int32_t stages, std::int32_t s, std::int32_t r,
                                        std::int32_t t) const {
  std::size_t index = 0, stride = 1;
  for (const std::string& dim : order) {
    std::int32_t size = dim == "tp" ? tp : dim == "dp" ? dp : stages;
    std::int32_t coord = dim == "tp" ? t : dim == "dp" ? r : s;
    index += static_cast<std::size_t>(coord) * stride;
    stride *= static_cast<std::size_t>(size);
  }
  return index;
}

}  // namespace bubblesim
