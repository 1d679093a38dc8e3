#include "schedules/passes/a2a_pairing.h"

#include <algorithm>
#include <cstddef>

#include "schedules/list_scheduling.h"

namespace bubblesim {

namespace {

/// Which forwards and backwards are done, as the list-scheduling kernel's end-time store
/// (list_scheduling.h; a done op's time does not matter here, only that it ran). Other kinds
/// are not tracked: they never join two devices.
class Progress {
 public:
  explicit Progress(const Table& t)
      : stages_(t.stages),
        microbatches_(t.microbatches),
        forward_(cells(t), false),
        backward_(cells(t), false) {}

  /// Whether every input of `op` is done.
  bool ready(const Op& op) const {
    return !list_scheduling::inputs_of(op, stages_, *this,
                                       [](list_scheduling::DependencyKind, std::int32_t,
                                          std::int32_t, std::int64_t e) { return e; })
                .pending;
  }
  void finish(const Op& op) {
    list_scheduling::for_each_half(op, [&](OpKind k, std::int32_t s, std::int32_t j) {
      if (k == OpKind::Forward) forward_[at(s, j)] = true;
      if (k == OpKind::Backward) backward_[at(s, j)] = true;
    });
  }
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    if (k != OpKind::Forward && k != OpKind::Backward) return list_scheduling::kAbsent;
    const bool done = (k == OpKind::Forward ? forward_ : backward_)[at(s, j)];
    return done ? 0 : list_scheduling::kPending;
  }

 private:
  static std::size_t cells(const Table& t) {
    return static_cast<std::size_t>(std::max(0, t.stages)) *
           static_cast<std::size_t>(std::max(0, t.microbatches));
  }
  std::size_t at(std::int32_t s, std::int32_t j) const {
    return static_cast<std::size_t>(s) * static_cast<std::size_t>(microbatches_) +
           static_cast<std::size_t>(j);
  }

  std::int32_t stages_, microbatches_;
  std::vector<bool> forward_, backward_;
};

/// The first op of each device that cannot start when the table stalls; empty when it runs to
/// its end.
std::vector<std::pair<std::size_t, std::size_t>> stalled_heads(const Table& t) {
  Progress progress(t);
  std::vector<std::size_t> next(t.device_ops.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
      const std::vector<Op>& ops = t.device_ops[d];
      while (next[d] < ops.size() && progress.ready(ops[next[d]])) {
        progress.finish(ops[next[d]++]);
        moved = true;
      }
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t d = 0; d < t.device_ops.size(); ++d)
    if (next[d] < t.device_ops[d].size()) out.emplace_back(d, next[d]);
  return out;
}

bool operands_in_range(const Op& op, const Table& t) {
  return op.stage >= 0 && op.stage < t.stages && op.microbatch >= 0 &&
         op.microbatch < t.microbatches;
}

}  // namespace

PairingResult pair_backward_forward(const Table& table) {
  PairingResult out{table, std::vector<std::int64_t>(table.device_ops.size(), 0), 0, 0};
  for (const std::vector<Op>& ops : table.device_ops) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::ForwardBackward || !operands_in_range(op, table)) return out;
    }
  }
  // The pairs, as (device, index of the B in the original list).
  std::vector<std::vector<bool>> fused(table.device_ops.size());
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    const std::vector<Op>& ops = table.device_ops[d];
    fused[d].assign(ops.size(), false);
    for (std::size_t i = 0; i + 1 < ops.size(); ++i) {
      if (ops[i].kind == OpKind::Backward && ops[i + 1].kind == OpKind::Forward) {
        fused[d][i] = true;
        ++out.candidates;
        ++i;  // that F is taken
      }
    }
  }
  // The table with the pairs `fused` marks; origin[d][k]: the original index of its k-th op on
  // device d (of the B for an F&B).
  std::vector<std::vector<std::size_t>> origin(table.device_ops.size());
  auto build = [&] {
    Table t = table;
    for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
      const std::vector<Op>& ops = table.device_ops[d];
      std::vector<Op> merged;
      merged.reserve(ops.size());
      origin[d].clear();
      for (std::size_t i = 0; i < ops.size(); ++i) {
        origin[d].push_back(i);
        if (fused[d][i]) {
          merged.push_back(
              Op::fused(ops[i + 1].stage, ops[i + 1].microbatch, ops[i].stage, ops[i].microbatch));
          ++i;
        } else {
          merged.push_back(ops[i]);
        }
      }
      t.device_ops[d] = std::move(merged);
    }
    return t;
  };
  // Undo the pairs at which devices stall until the table runs through; each round undoes one or
  // ends. A stall elsewhere keeps the table unpaired (one that stalls without pairs is left to
  // the engine, which reports the deadlock).
  for (;;) {
    Table t = build();
    const auto stalled = stalled_heads(t);
    if (stalled.empty()) {
      out.table = std::move(t);
      break;
    }
    bool undone = false;
    for (const auto& [d, index] : stalled) {
      if (t.device_ops[d][index].kind != OpKind::ForwardBackward) continue;
      fused[d][origin[d][index]] = false;
      undone = true;
      ++out.refused;
    }
    if (!undone) {  // the stall is not at a pair: keep the table as it came
      for (std::vector<bool>& d : fused) std::fill(d.begin(), d.end(), false);
      out.refused = out.candidates;
      out.table = table;
      break;
    }
  }
  for (std::size_t d = 0; d < fused.size(); ++d)
    out.pairs_per_device[d] = std::count(fused[d].begin(), fused[d].end(), true);
  return out;
}

}  // namespace bubblesim
