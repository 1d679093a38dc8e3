#include "schedules/op.h"

#include <fmt/format.h>

namespace bubblesim {

char op_kind_letter(OpKind kind) {
  switch (kind) {
    case OpKind::Forward:
      return 'F';
    case OpKind::Backward:
      return 'B';
    case OpKind::Weight:
      return 'W';
    case OpKind::Recompute:
      return 'R';
    case OpKind::Offload:
      return 'O';
    case OpKind::Reload:
      return 'L';
    case OpKind::ForwardBackward:
      return 'X';
  }
  return '?';
}

std::optional<OpKind> op_kind_from_letter(char letter) {
  switch (letter) {
    case 'F':
      return OpKind::Forward;
    case 'B':
      return OpKind::Backward;
    case 'W':
      return OpKind::Weight;
    case 'R':
      return OpKind::Recompute;
    case 'O':
      return OpKind::Offload;
    case 'L':
      return OpKind::Reload;
    case 'X':
      return OpKind::ForwardBackward;
    default:
      return std::nullopt;
  }
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Forward:
      return "forward";
    case OpKind::Backward:
      return "backward";
    case OpKind::Weight:
      return "weight-gradient";
    case OpKind::Recompute:
      return "recompute";
    case OpKind::Offload:
      return "offload";
    case OpKind::Reload:
      return "reload";
    case OpKind::ForwardBackward:
      return "fused forward+backward";
  }
  return "?";
}

Stream stream_of(OpKind kind) {
  switch (kind) {
    case OpKind::Offload:
      return Stream::DeviceToHost;
    case OpKind::Reload:
      return Stream::HostToDevice;
    default:
      return Stream::Compute;
  }
}

std::string to_string(const Op& op) {
  if (op.kind == OpKind::ForwardBackward) {
    return fmt::format("F{}.{}&B{}.{}", op.stage, op.microbatch, op.backward_stage,
                       op.backward_microbatch);
  }
  return fmt::format("{}{}.{}", op_kind_letter(op.kind), op.stage, op.microbatch);
}

}  // namespace bubblesim
