#include "sim/engine/op_index.h"

namespace bubblesim {

OpIndex::OpIndex(const Table& table)
    : table_(&table), microbatches_(static_cast<std::size_t>(std::max(table.microbatches, 0))) {
  const auto devices = static_cast<std::size_t>(table.devices);
  device_offset_.resize(devices + 1);
  std::uint32_t total = 0;
  std::array<bool, 6>& present = present_;
  for (std::size_t d = 0; d < devices; ++d) {
    device_offset_[d] = total;
    total += static_cast<std::uint32_t>(table.device_ops[d].size());
    for (const Op& op : table.device_ops[d]) {
      if (op.kind == OpKind::ForwardBackward) {
        present[static_cast<std::size_t>(OpKind::Forward)] = true;
        present[static_cast<std::size_t>(OpKind::Backward)] = true;
      } else {
        present[static_cast<std::size_t>(op.kind)] = true;
      }
    }
  }
  device_offset_[devices] = total;
}

void OpIndex::build_slots() const {
  const Table& table = *table_;
  const auto devices = static_cast<std::size_t>(table.devices);
  slots_built_ = true;
  const std::size_t slots = static_cast<std::size_t>(std::max(table.stages, 0)) * microbatches_;
  for (std::size_t k = 0; k < present_.size(); ++k) {
    if (present_[k]) slots_[k].assign(slots, kNone);
  }
  auto put = [&](OpKind kind, std::int32_t s, std::int32_t j, std::uint32_t node) {
    if (s < 0 || s >= table.stages || j < 0 || j >= table.microbatches) return;
    std::uint32_t& at = slots_[static_cast<std::size_t>(kind)][slot(s, j)];
    if (at == kNone) at = node;  // a duplicate keeps the first (the validator reports it)
  };
  for (std::size_t d = 0; d < devices; ++d) {
    std::uint32_t node = device_offset_[d];
    for (const Op& op : table.device_ops[d]) {
      if (op.kind == OpKind::ForwardBackward) {
        put(OpKind::Forward, op.stage, op.microbatch, node);
        put(OpKind::Backward, op.backward_stage, op.backward_microbatch, node);
      } else {
        put(op.kind, op.stage, op.microbatch, node);
      }
      ++node;
    }
  }
}

std::vector<std::size_t> OpIndex::ops_per_device() const {
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d + 1 < device_offset_.size(); ++d)
    out.push_back(device_offset_[d + 1] - device_offset_[d]);
  return out;
}

}  // namespace bubblesim
