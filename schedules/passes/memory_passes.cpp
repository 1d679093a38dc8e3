#include "schedules/passes/memory_passes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

#include "schedules/table_index.h"

namespace bubblesim {
namespace {

bool is_compute(const Op& op) { return stream_of(op.kind) == Stream::Compute; }

// The (stage, microbatch) whose backward an op runs, if any.
std::optional<std::pair<std::int32_t, std::int32_t>> backward_of(const Op& op) {
  if (op.kind == OpKind::Backward) return std::make_pair(op.stage, op.microbatch);
  if (op.kind == OpKind::ForwardBackward)
    return std::make_pair(op.backward_stage, op.backward_microbatch);
  return std::nullopt;
}

bool untouched(const TableIndex& index, std::int32_t s, std::int32_t j) {
  return !index.find(OpKind::Recompute, s, j).present() &&
         !index.find(OpKind::Offload, s, j).present() &&
         !index.find(OpKind::Reload, s, j).present();
}

PassDecision empty_decision(PassKind kind, MemoryPolicy policy, const Table& table) {
  PassDecision d;
  d.kind = kind;
  d.policy = policy;
  d.count_per_device.assign(static_cast<std::size_t>(table.devices), 0);
  d.bytes_per_device.assign(static_cast<std::size_t>(table.devices), Bytes::zero());
  return d;
}

}  // namespace

PassResult apply_recompute_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                                const RecomputeSettings& settings) {
  PassResult out{table, empty_decision(PassKind::Recompute, settings.policy, table)};
  if (settings.policy == MemoryPolicy::None) return out;
  // Recompute inside the backward changes costs, not the table (memory_settings.h): report it.
  if (settings.in_backward()) {
    out.decision.in_backward = true;
    std::set<std::int32_t> stages;
    for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
      for (const Op& op : table.device_ops[d]) {
        auto b = backward_of(op);
        if (!b) continue;
        ++out.decision.candidates;
        const StageCost::BackwardRecompute& r =
            stage_costs[static_cast<std::size_t>(b->first)].backward_recompute;
        if (r.time <= Time::zero() && r.units == 0) continue;
        ++out.decision.count_per_device[d];
        out.decision.bytes_per_device[d] += r.not_stored;
        out.decision.units = std::max(out.decision.units, r.units);
        out.decision.unit = std::max(out.decision.unit, r.unit);
        stages.insert(b->first);
      }
    }
    out.decision.stages.assign(stages.begin(), stages.end());
    return out;
  }
  const bool subset = !settings.stages.empty() || settings.fraction.has_value();
  std::vector<bool> chosen(static_cast<std::size_t>(table.stages), !subset);
  if (subset) {
    if (!settings.stages.empty()) {
      for (std::int32_t s : settings.stages) {
        if (s >= 0 && s < table.stages) chosen[static_cast<std::size_t>(s)] = true;
      }
    } else {
      auto n = static_cast<std::int32_t>(std::ceil(*settings.fraction * table.stages - 1e-9));
      for (std::int32_t s = 0; s < std::min(n, table.stages); ++s)
        chosen[static_cast<std::size_t>(s)] = true;
    }
  }
  const TableIndex index(table);
  std::set<std::int32_t> stages;
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    std::vector<Op>& ops = out.table.device_ops[d];
    ops.clear();
    for (const Op& op : table.device_ops[d]) {
      if (auto b = backward_of(op)) {
        auto [s, j] = *b;
        ++out.decision.candidates;
        if (chosen[static_cast<std::size_t>(s)] && untouched(index, s, j) &&
            index.find(OpKind::Forward, s, j).present()) {
          ops.push_back(Op{OpKind::Recompute, s, j});
          const StageCost& c = stage_costs[static_cast<std::size_t>(s)];
          ++out.decision.count_per_device[d];
          out.decision.bytes_per_device[d] += c.activation - std::min(c.stage_input, c.activation);
          stages.insert(s);
        }
      }
      ops.push_back(op);
    }
  }
  out.decision.stages.assign(stages.begin(), stages.end());
  return out;
}

PassResult apply_offload_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                              const TableTimings& ideal, const OffloadSettings& settings) {
  PassResult out{table, empty_decision(PassKind::Offload, settings.policy, table)};
  out.decision.prefetch = settings.prefetch;
  if (settings.policy == MemoryPolicy::None) return out;
  const auto devices = static_cast<std::size_t>(table.devices);
  if (settings.prefetch < 1)
    throw std::invalid_argument("the offload prefetch distance must be at least 1");
  if (ideal.size() != devices || settings.d2h.size() != devices || settings.h2d.size() != devices) {
    throw std::invalid_argument("the offload pass needs timings and bandwidths for every device");
  }
  for (std::size_t d = 0; d < devices; ++d) {
    if (ideal[d].size() != table.device_ops[d].size()) {
      throw std::invalid_argument("the offload pass needs timings for every op");
    }
  }
  const TableIndex index(table);
  struct Candidate {
    std::size_t device;
    std::int32_t stage, microbatch;
    std::size_t forward_position;  // O goes right after it
    std::size_t trigger_position;  // L goes right after it (a compute op)
    std::size_t backward_position;
    Time window;
    Bytes bytes;
  };
  std::vector<std::vector<Candidate>> eligible(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    const std::vector<Op>& ops = table.device_ops[d];
    std::vector<std::size_t> compute_positions;
    std::vector<std::size_t> compute_rank(ops.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!is_compute(ops[i])) continue;
      compute_rank[i] = compute_positions.size();
      compute_positions.push_back(i);
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      auto b = backward_of(ops[i]);
      if (!b) continue;
      auto [s, j] = *b;
      OpLocation f = index.find(OpKind::Forward, s, j);
      if (!f.present() || static_cast<std::size_t>(f.device) != d || !untouched(index, s, j))
        continue;
      const StageCost& c = stage_costs[static_cast<std::size_t>(s)];
      if (c.activation <= Bytes::zero()) continue;
      ++out.decision.candidates;
      const auto fpos = static_cast<std::size_t>(f.position);
      Time window = ideal[d][i].start - ideal[d][fpos].end;
      Time copies = transfer_time(c.activation, settings.d2h[d]) +
                    transfer_time(c.activation, settings.h2d[d]);
      const auto rank_b = static_cast<std::int64_t>(compute_rank[i]);
      const std::int64_t trigger = rank_b - settings.prefetch;
      // The reload must be triggered after the forward, else nothing is gained.
      if (window < copies + settings.min_idle ||
          trigger <= static_cast<std::int64_t>(compute_rank[fpos])) {
        ++out.decision.rejected;
        continue;
      }
      eligible[d].push_back(Candidate{d, s, j, fpos,
                                      compute_positions[static_cast<std::size_t>(trigger)], i,
                                      window, c.activation});
    }
  }
  // Choose.
  std::vector<Candidate> chosen;
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<Candidate>& list = eligible[d];
    if (settings.policy == MemoryPolicy::Selective && !settings.stages.empty()) {
      for (const Candidate& c : list) {
        if (std::find(settings.stages.begin(), settings.stages.end(), c.stage) !=
            settings.stages.end()) {
          chosen.push_back(c);
        } else {
          ++out.decision.rejected;
        }
      }
    } else if (settings.policy == MemoryPolicy::Selective) {
      // The longest-lived half of this device's eligible activations (ties: stage, microbatch).
      std::vector<Candidate> sorted = list;
      std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate& a, const Candidate& b) {
        return std::tie(b.window, a.stage, a.microbatch) <
               std::tie(a.window, b.stage, b.microbatch);
      });
      std::size_t keep = (sorted.size() + 1) / 2;
      for (std::size_t k = 0; k < sorted.size(); ++k) {
        if (k < keep)
          chosen.push_back(sorted[k]);
        else
          ++out.decision.rejected;
      }
    } else {
      chosen.insert(chosen.end(), list.begin(), list.end());
    }
  }
  // Rebuild the device lists: O right after its F, L right after its trigger (in B order).
  std::vector<std::vector<std::vector<Op>>> after(devices);
  for (std::size_t d = 0; d < devices; ++d) after[d].resize(table.device_ops[d].size());
  std::sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.device, a.backward_position) < std::tie(b.device, b.backward_position);
  });
  std::set<std::int32_t> stages;
  for (const Candidate& c : chosen) {
    after[c.device][c.forward_position].push_back(Op{OpKind::Offload, c.stage, c.microbatch});
    ++out.decision.count_per_device[c.device];
    out.decision.bytes_per_device[c.device] += c.bytes;
    stages.insert(c.stage);
  }
  for (const Candidate& c : chosen)
    after[c.device][c.trigger_position].push_back(Op{OpKind::Reload, c.stage, c.microbatch});
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<Op>& ops = out.table.device_ops[d];
    ops.clear();
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      ops.push_back(table.device_ops[d][i]);
      ops.insert(ops.end(), after[d][i].begin(), after[d][i].end());
    }
  }
  out.decision.stages.assign(stages.begin(), stages.end());
  return out;
}

}  // namespace bubblesim
