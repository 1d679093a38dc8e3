#include "sim/report/html_comm_lanes.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/report/html_time.h"

namespace bubblesim {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The slice kind of a collective the engine reports, or 0 for one that is not communication of
// the device (the optimizer step, the barrier: the iteration tail shows those).
char kind_of(const std::string& name) {
  if (starts_with(name, "tp ")) return 't';
  if (starts_with(name, "dp ") || starts_with(name, "replica ") ||
      starts_with(name, "expert dp ") || starts_with(name, "expert replica "))
    return 'd';
  if (starts_with(name, "expert all-to-all")) return 'a';
  return 0;
}

// The exposed part of ZeRO-3's per-layer parameter gathers inside an op (model_costs.h's
// zero_comm), from the breakdown of the table stage it runs.
Time zero_inside(const ResolvedScenario& resolved, const Op& op, std::int32_t chunks) {
  if (!resolved.model_costs) return Time::zero();
  const ModelCosts& mc = *resolved.model_costs;
  const std::vector<StageBreakdown>* stages = &mc.stages;
  if (chunks > 1) {
    const auto it = mc.chunked.find(chunks);
    if (it == mc.chunked.end()) return Time::zero();
    stages = &it->second;
  }
  auto part = [&](std::int32_t s, TimeParts StageBreakdown::*pass) {
    if (s < 0 || static_cast<std::size_t>(s) >= stages->size()) return 0.0;
    return ((*stages)[static_cast<std::size_t>(s)].*pass).zero_comm;
  };
  double seconds = 0;
  switch (op.kind) {
    case OpKind::Forward:
      seconds = part(op.stage, &StageBreakdown::forward);
      break;
    case OpKind::Backward:
      seconds = part(op.stage, &StageBreakdown::backward_input);
      break;
    case OpKind::Weight:
      seconds = part(op.stage, &StageBreakdown::backward_weight);
      break;
    case OpKind::Recompute:
      seconds = part(op.stage, &StageBreakdown::recompute);
      break;
    case OpKind::ForwardBackward:
      seconds = part(op.stage, &StageBreakdown::forward) +
                part(op.backward_stage, &StageBreakdown::backward_input);
      break;
    default:
      break;
  }
  return Time::from_seconds(seconds);
}

// Per device, the ZeRO 1/2 parameter all-gather after its optimizer step: its stages' share, as
// the sync plan sums it (sim/runner/sync_plan.cpp).
std::vector<Time> gather_after_step(const ResolvedScenario& resolved, const Table& table) {
  std::vector<Time> out(static_cast<std::size_t>(table.devices), Time::zero());
  const std::vector<Time>& gather = resolved.sync.parameter_gather;
  if (gather.empty()) return out;
  const std::int64_t chunks = std::max(table.chunks, 1);
  const auto held = table.placement.stages_by_device(table.devices);
  for (std::size_t d = 0; d < out.size(); ++d) {
    for (std::int32_t s : held[d]) {
      const auto ps = static_cast<std::size_t>(s / chunks);
      if (ps < gather.size()) out[d] += Time::from_ps(gather[ps].ps() / chunks);
    }
  }
  return out;
}

}  // namespace

void CommLaneRecorder::on_transfer_start(const TransferEvent& e) {
  if (slices_.size() >= max_slices_) return;
  open_.emplace_back(e.id, slices_.size());
  slices_.push_back({e.from_device, 'p', e.time, e.time,
                     fmt::format("send {} to GPU {}", to_string(e.producer), e.to_device)});
}

void CommLaneRecorder::on_transfer_end(const TransferEvent& e) {
  // Transfers end roughly in the order they start: search the open ones from the oldest.
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (it->first != e.id) continue;
    slices_[it->second].end = e.time;
    open_.erase(it);
    return;
  }
}

void CommLaneRecorder::on_collective(const CollectiveEvent& e) {
  const char kind = kind_of(e.name);
  if (kind != 0 && e.end > e.start && slices_.size() < max_slices_)
    slices_.push_back({e.device, kind, e.start, e.end, e.name});
}

nlohmann::json comm_lane_slices(const ResolvedScenario& resolved, const ScheduleRun& run,
                                const CommLaneRecorder* recorder, double exact_until_us) {
  nlohmann::json out = nlohmann::json::array();
  const Table& table = run.table;
  const SimulationResult& sim = run.simulation;
  if (sim.timings.size() < table.device_ops.size()) return out;
  // The report draws the first iteration: a device's next one starts after its optimizer step
  // (sim/engine/iteration_end.cpp), before a ZeRO parameter all-gather after it has ended; the
  // recorded slices of a device that start later are its second iteration's.
  const SyncMetrics& sync = sim.metrics.sync;
  const std::vector<Time> gathers = gather_after_step(resolved, table);
  auto second_iteration = [&](std::int32_t d) {
    const auto du = static_cast<std::size_t>(d);
    if (du >= sync.optimizer_end_per_device.size()) return sim.metrics.makespan;
    return sync.optimizer_end_per_device[du] - (du < gathers.size() ? gathers[du] : Time::zero());
  };
  std::vector<CommLaneRecorder::Slice> slices;
  if (recorder != nullptr) {
    for (const CommLaneRecorder::Slice& s : recorder->slices())
      if (s.start < second_iteration(s.device)) slices.push_back(s);
  }
  // Per device its compute intervals (copies excluded), in order, and the ZeRO-3 gathers inside
  // its ops.
  std::vector<std::vector<std::pair<Time, Time>>> compute(table.device_ops.size());
  const std::int32_t chunks = std::max(table.chunks, 1);
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      const Op& op = table.device_ops[d][i];
      const OpTiming& t = sim.timings[d][i];
      if (t.start.ps() < 0 || op.kind == OpKind::Offload || op.kind == OpKind::Reload) continue;
      compute[d].emplace_back(t.start, t.end);
      const Time z = zero_inside(resolved, op, chunks);
      if (z > Time::zero())
        slices.push_back({static_cast<std::int32_t>(d), 'z', t.start, std::min(t.end, t.start + z),
                          fmt::format("ZeRO parameter gathers in {}", to_string(op))});
    }
    std::sort(compute[d].begin(), compute[d].end());
  }
  for (std::size_t d = 0; d < gathers.size() && d < sync.optimizer_end_per_device.size(); ++d) {
    const Time end = sync.optimizer_end_per_device[d];
    if (gathers[d] > Time::zero() && end > gathers[d])
      slices.push_back({static_cast<std::int32_t>(d), 'z', end - gathers[d], end,
                        "ZeRO parameter all-gather after the optimizer step"});
  }
  std::stable_sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
    return a.device != b.device ? a.device < b.device : a.start < b.start;
  });
  auto emit = [&](const CommLaneRecorder::Slice& s, Time from, Time to, bool exposed) {
    if (to > from)
      out.push_back(
          {s.device, std::string(1, s.kind), html_us(from), html_us(to), exposed ? 1 : 0, s.name});
  };
  for (const CommLaneRecorder::Slice& s : slices) {
    if (s.device < 0 || static_cast<std::size_t>(s.device) >= compute.size()) continue;
    if (html_us(s.start) >= exact_until_us || s.end <= s.start) continue;
    // Inside an op (TP, ZeRO-3's gathers, the exposed all-to-all): the op waits, exposed. The
    // all-to-all hidden under compute: hidden.
    if (s.kind == 't' || (s.kind == 'z' && s.name.rfind("ZeRO parameter gathers", 0) == 0) ||
        (s.kind == 'a' && s.name.find("exposed") != std::string::npos)) {
      emit(s, s.start, s.end, true);
      continue;
    }
    if (s.kind == 'a') {
      emit(s, s.start, s.end, false);
      continue;
    }
    // Sends and buckets: hidden where the device computes meanwhile, exposed elsewhere.
    Time at = s.start;
    for (const auto& [from, to] : compute[static_cast<std::size_t>(s.device)]) {
      if (to <= at) continue;
      if (from >= s.end) break;
      emit(s, at, std::min(from, s.end), true);
      emit(s, std::max(from, at), std::min(to, s.end), false);
      at = std::max(at, std::min(to, s.end));
      if (at >= s.end) break;
    }
    emit(s, at, s.end, true);
  }
  return out;
}

}  // namespace bubblesim
