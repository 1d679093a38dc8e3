// Writing a table as PyTorch's per-rank schedule CSV (torch_csv.h), in either dialect.
#include <fmt/format.h>

#include <stdexcept>

#include "schedules/table_index.h"
#include "schedules/torch_csv.h"

namespace bubblesim {
namespace {

std::string action_text(std::int32_t stage, std::string_view code, std::int32_t microbatch) {
  return fmt::format("{}{}{}", stage, code, microbatch);
}

}  // namespace

std::string write_torch_csv(const Table& table, TorchDialect dialect) {
  if (table.placement.replicas() > 1) {
    throw std::invalid_argument(
        "a PyTorch schedule file maps each stage to one rank; this table replicates stages");
  }
  const bool current = dialect == TorchDialect::Current;
  TableIndex index(table);
  auto backward_code = [&](std::int32_t s, std::int32_t j) -> std::string_view {
    if (index.has_weight(s, j)) return current ? "I" : "B";
    return current ? "B" : "BW";
  };
  std::string out;
  for (const std::vector<Op>& ops : table.device_ops) {
    bool first = true;
    for (const Op& op : ops) {
      if (!first) out += ',';
      first = false;
      switch (op.kind) {
        case OpKind::Forward:
          out += action_text(op.stage, "F", op.microbatch);
          break;
        case OpKind::Backward:
          out += action_text(op.stage, backward_code(op.stage, op.microbatch), op.microbatch);
          break;
        case OpKind::Weight:
          out += action_text(op.stage, "W", op.microbatch);
          break;
        case OpKind::ForwardBackward:
          if (!current)
            throw std::invalid_argument(
                "fused F&B ops (OVERLAP_F_B) exist only in the current dialect");
          out += fmt::format("({};{})OVERLAP_F_B", action_text(op.stage, "F", op.microbatch),
                             action_text(op.backward_stage,
                                         backward_code(op.backward_stage, op.backward_microbatch),
                                         op.backward_microbatch));
          break;
        case OpKind::Recompute:
        case OpKind::Offload:
        case OpKind::Reload:
          throw std::invalid_argument(fmt::format("{} ops ({}) have no PyTorch schedule action",
                                                  op_kind_name(op.kind), to_string(op)));
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace bubblesim
