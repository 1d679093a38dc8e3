// Hanayo (Liu et al., SC'23): wave-like pipeline, W waves, no weight replication.
// The paper's slot construction is not available; this is "Hanayo (bubblesim construction)", a
// re-implementation of the third-party reconstruction described in docs/schedule-rules.md 4.16
// (class Hanayo1F1BPipeline of an unidentified public cross-datacenter PP simulator), written from
// that description. Rules (docs/schedules-zoo-c.md):
// - zigzag placement with 2W chunks per device: chunk c covers stages cp..cp+p-1 and runs on
//   devices 0..p-1 for even c, p-1..0 for odd c (first and last stage on device 0);
// - a slot grid per device, F one slot, the full backward B two consecutive slots;
// - microbatches in groups of p. In a group, the first microbatch mb0 is placed along its path
//   (forwards 0..stages-1, then backwards stages-1..0), each op in the first free slots on its
//   device strictly after the previous op; the search starts where the previous group's mb0
//   finished. Then on device d the still-free slots among the p-1-d just before mb0's chunk-1
//   forward and the d just before mb0's last-chunk backward are restricted (never used). Then
//   mb0+1..mb0+p-1 are placed the same way, each searching from the group start;
// - the device order is the ops sorted by slot. The grid is a feasible timed schedule, so the
//   order never deadlocks, whatever the op durations.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "schedules/generator.h"

namespace bubblesim {
namespace {

struct HanayoShape {
  std::int32_t devices = 0;
  std::int32_t microbatches = 0;
  std::int32_t waves = 1;
  std::int32_t chunks() const { return 2 * waves; }
  std::int32_t stages() const { return chunks() * devices; }
};

HanayoShape hanayo_shape(const GeneratorInput& in) {
  HanayoShape shape;
  shape.devices = in.devices;
  shape.microbatches = in.microbatches;
  shape.waves = in.params.has("waves") ? static_cast<std::int32_t>(in.params.integer("waves")) : 1;
  if (shape.devices < 1)
    throw ScheduleConstraintError(fmt::format("hanayo needs p >= 1; got p = {}", shape.devices));
  if (shape.waves < 1)
    throw ScheduleConstraintError(fmt::format("hanayo needs waves >= 1; got {}", shape.waves));
  const std::int32_t p = shape.devices, m = shape.microbatches;
  if (m < p || m % p != 0) {
    throw ScheduleConstraintError(
        fmt::format("hanayo (bubblesim construction) schedules microbatches in groups of p, so m "
                    "must be a positive multiple of "
                    "p = {}; got m = {}, use m = {}",
                    p, m, std::max(p, (m + p - 1) / p * p)));
  }
  return shape;
}

/// Zigzag: stage s = c p + i is on device i for even chunk c, p-1-i for odd c.
std::int32_t zigzag_device(std::int32_t stage, std::int32_t devices) {
  const std::int32_t chunk = stage / devices, i = stage % devices;
  return chunk % 2 == 0 ? i : devices - 1 - i;
}

/// One device's slot occupancy: every slot is free, taken by an op, or restricted.
class SlotRow {
 public:
  bool free(std::int64_t slot, std::int64_t length) const {
    for (std::int64_t t = slot; t < slot + length; ++t) {
      if (taken_.count(t) != 0) return false;
    }
    return true;
  }
  /// First slot >= earliest where `length` consecutive slots are free; takes them.
  std::int64_t place(std::int64_t earliest, std::int64_t length, const Op& op) {
    std::int64_t slot = earliest;
    while (!free(slot, length)) ++slot;
    for (std::int64_t t = slot; t < slot + length; ++t) taken_[t] = false;
    ops_.emplace_back(slot, op);
    return slot;
  }
  void restrict_if_free(std::int64_t slot) {
    if (slot >= 0 && taken_.count(slot) == 0) taken_[slot] = true;
  }
  std::vector<Op> ordered_ops() {
    std::sort(ops_.begin(), ops_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Op> out;
    out.reserve(ops_.size());
    for (const auto& [slot, op] : ops_) out.push_back(op);
    return out;
  }

 private:
  std::map<std::int64_t, bool> taken_;  // slot -> restricted (true) or occupied (false)
  std::vector<std::pair<std::int64_t, Op>> ops_;
};

constexpr std::int64_t kForwardSlots = 1;
constexpr std::int64_t kBackwardSlots = 2;

Table generate_hanayo(const GeneratorInput& in) {
  const HanayoShape shape = hanayo_shape(in);
  const std::int32_t p = shape.devices, stages = shape.stages(), v = shape.chunks();
  Table t;
  t.devices = p;
  t.stages = stages;
  t.chunks = v;
  t.microbatches = shape.microbatches;
  std::vector<std::int32_t> map(static_cast<std::size_t>(stages));
  for (std::int32_t s = 0; s < stages; ++s) map[static_cast<std::size_t>(s)] = zigzag_device(s, p);
  t.placement.device_of_stage.push_back(map);

  std::vector<SlotRow> rows(static_cast<std::size_t>(p));
  std::vector<std::int64_t> forward_slot(static_cast<std::size_t>(stages)),
      backward_slot(static_cast<std::size_t>(stages));
  // Places microbatch j along its path from `earliest`; returns the slot after its last backward.
  auto place_path = [&](std::int32_t j, std::int64_t earliest) {
    std::int64_t next = earliest;
    for (std::int32_t s = 0; s < stages; ++s) {
      auto& row = rows[static_cast<std::size_t>(map[static_cast<std::size_t>(s)])];
      forward_slot[static_cast<std::size_t>(s)] = row.place(next, kForwardSlots, Op::forward(s, j));
      next = forward_slot[static_cast<std::size_t>(s)] + kForwardSlots;
    }
    for (std::int32_t s = stages - 1; s >= 0; --s) {
      auto& row = rows[static_cast<std::size_t>(map[static_cast<std::size_t>(s)])];
      backward_slot[static_cast<std::size_t>(s)] =
          row.place(next, kBackwardSlots, Op::backward(s, j));
      next = backward_slot[static_cast<std::size_t>(s)] + kBackwardSlots;
    }
    return next;
  };

  std::int64_t group_start = 0;
  for (std::int32_t mb0 = 0; mb0 < shape.microbatches; mb0 += p) {
    const std::int64_t start = group_start;
    group_start = place_path(mb0, start);
    for (std::int32_t d = 0; d < p; ++d) {
      // On device d, chunk 1 (odd: devices p-1..0) holds stage p + (p-1-d); the last chunk v-1
      // (odd) holds stage (v-1)p + (p-1-d).
      auto& row = rows[static_cast<std::size_t>(d)];
      const std::int64_t chunk1_forward = forward_slot[static_cast<std::size_t>(p + (p - 1 - d))];
      const std::int64_t last_backward =
          backward_slot[static_cast<std::size_t>((v - 1) * p + (p - 1 - d))];
      for (std::int64_t k = 1; k <= p - 1 - d; ++k) row.restrict_if_free(chunk1_forward - k);
      for (std::int64_t k = 1; k <= d; ++k) row.restrict_if_free(last_backward - k);
    }
    for (std::int32_t j = mb0 + 1; j < mb0 + p; ++j) place_path(j, start);
  }
  t.device_ops.resize(static_cast<std::size_t>(p));
  for (std::int32_t d = 0; d < p; ++d)
    t.device_ops[static_cast<std::size_t>(d)] = rows[static_cast<std::size_t>(d)].ordered_ops();
  return t;
}

Formula hanayo_formula(const GeneratorInput& in) {
  hanayo_shape(in);  // same constraints as the table
  Formula f;
  f.note =
      "Hanayo (bubblesim construction): no published bubble or activation formula; the paper's "
      "slot construction "
      "is not available. Built on a slot grid with F = 1 slot, B = 2 slots";
  return f;
}

}  // namespace

void register_hanayo(Registrar& registrar) {
  std::vector<ParamSpec> params;
  params.push_back(integer_param(
      "waves", 1,
      "W: waves; each device holds 2W chunks (wave w: chunk 2w on devices 0..p-1, chunk "
      "2w+1 on p-1..0)",
      1));
  registrar.add(Generator{
      GeneratorInfo{"hanayo",
                    "Hanayo (bubblesim construction): wave-like zigzag pipeline, W waves, no "
                    "weight replication; "
                    "re-implements a third-party reconstruction, not confirmed against the paper",
                    "zigzag (2W chunks per device)",
                    "Liu et al., Hanayo, SC'23 (arXiv 2308.15762); slot rule from a third-party "
                    "reconstruction "
                    "(docs/schedule-rules.md 4.16)",
                    std::move(params)},
      generate_hanayo, hanayo_formula});
}

}  // namespace bubblesim
