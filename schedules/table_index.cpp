#include "schedules/table_index.h"

namespace bubblesim {

TableIndex::TableIndex(const Table& table)
    : stages_(table.stages), microbatches_(table.microbatches) {
  std::size_t n = static_cast<std::size_t>(std::max(0, stages_)) *
                  static_cast<std::size_t>(std::max(0, microbatches_)) * kIndexedKinds;
  slots_.assign(n, OpLocation{});
  counts_.assign(n, 0);
  auto note = [&](OpKind kind, std::int32_t s, std::int32_t j, std::int32_t d, std::int32_t pos) {
    if (s < 0 || s >= stages_ || j < 0 || j >= microbatches_) return;
    std::size_t k = slot(kind, s, j);
    if (counts_[k] < 255) ++counts_[k];
    if (!slots_[k].present()) slots_[k] = {d, pos};
  };
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    const auto& ops = table.device_ops[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      auto dd = static_cast<std::int32_t>(d);
      auto ii = static_cast<std::int32_t>(i);
      if (op.kind == OpKind::ForwardBackward) {
        note(OpKind::Forward, op.stage, op.microbatch, dd, ii);
        note(OpKind::Backward, op.backward_stage, op.backward_microbatch, dd, ii);
      } else {
        note(op.kind, op.stage, op.microbatch, dd, ii);
      }
    }
  }
}

}  // namespace bubblesim
