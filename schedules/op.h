#pragma once
// Op: one entry of a schedule table, the unit of work a device executes.

#include <cstdint>
#include <optional>
#include <string>

namespace bubblesim {

enum class OpKind : std::uint8_t {
  Forward,    // F(s, j)
  Backward,   // B(s, j): backward for inputs when the table has W(s, j), else the full backward
  Weight,     // W(s, j): weight-gradient half of a split backward
  Recompute,  // R(s, j): re-run F(s, j) before its backward (full recomputation)
  Offload,    // O(s, j): copy the stored activation of (s, j) to host memory (D2H engine)
  Reload,     // L(s, j): copy it back before the backward needs it (H2D engine)
  ForwardBackward,  // F&B: F of one (stage, microbatch) overlapped with B of another, as one op
};

inline constexpr int kOpKindCount = 7;

/// One-letter code used in tables and CSV files: F B W R O L, and X for a fused F&B.
char op_kind_letter(OpKind kind);
/// Inverse of op_kind_letter; nullopt for an unknown letter.
std::optional<OpKind> op_kind_from_letter(char letter);
/// "forward", "backward", ... for messages.
std::string_view op_kind_name(OpKind kind);

/// Which execution resource of a device runs an op.
enum class Stream : std::uint8_t { Compute, DeviceToHost, HostToDevice };
Stream stream_of(OpKind kind);

struct Op {
  OpKind kind = OpKind::Forward;
  std::int32_t stage = 0;                 // global stage; for F&B the forward half's stage
  std::int32_t microbatch = 0;            // for F&B the forward half's microbatch
  std::int32_t backward_stage = -1;       // F&B only: the backward half's stage
  std::int32_t backward_microbatch = -1;  // F&B only: the backward half's microbatch

  static Op forward(std::int32_t s, std::int32_t j) { return {OpKind::Forward, s, j}; }
  static Op backward(std::int32_t s, std::int32_t j) { return {OpKind::Backward, s, j}; }
  static Op weight(std::int32_t s, std::int32_t j) { return {OpKind::Weight, s, j}; }
  static Op fused(std::int32_t fs, std::int32_t fj, std::int32_t bs, std::int32_t bj) {
    return {OpKind::ForwardBackward, fs, fj, bs, bj};
  }

  friend bool operator==(const Op&, const Op&) = default;
};

/// "F3.12" style label: kind letter, stage, '.', microbatch; F&B as "F3.12&B5.7".
std::string to_string(const Op& op);

}  // namespace bubblesim
