#include "sim/runner/table_passes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "schedules/passes/a2a_pairing.h"
#include "schedules/passes/memory_passes.h"
#include "schedules/validator.h"
#include "sim/engine/engine.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

bool has_all_to_all(const std::vector<StageCost>& costs) {
  return std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward > Time::zero() || c.moe.a2a_backward > Time::zero();
  });
}

/// A stage list of a memory pass must name stages of the table.
void check_pass_stages(const Table& table, const std::vector<std::int32_t>& stages,
                       const SourceLocation& where, const char* key) {
  for (std::int32_t s : stages) {
    if (s >= table.stages) {
      throw InputError(
          {Diagnostic{where, key,
                      fmt::format("stage {} does not exist: the table has stages 0..{}", s,
                                  table.stages - 1)}});
    }
  }
}

TableTimings timings_of(const SimulationResult& replay) {
  TableTimings timings(replay.timings.size());
  for (std::size_t d = 0; d < replay.timings.size(); ++d) {
    for (const OpTiming& t : replay.timings[d]) timings[d].push_back(OpWindow{t.start, t.end});
  }
  return timings;
}

// `parallelism.a2a_overlap` (docs/moe.md): each backward and the forward after it become one
// overlapped F&B op where the stages have an expert all-to-all.
std::optional<PassDecision> pair_for_a2a_overlap(PassContext& ctx) {
  PairingResult r = pair_backward_forward(ctx.table);
  if (r.candidates == 0) return std::nullopt;  // nothing to pair (F&B ops already)
  ctx.table = std::move(r.table);
  PassDecision d;
  d.kind = PassKind::A2aPairing;
  d.count_per_device = std::move(r.pairs_per_device);
  d.bytes_per_device.assign(d.count_per_device.size(), Bytes::zero());
  d.candidates = r.candidates;
  d.rejected = r.refused;
  return d;
}

std::optional<PassDecision> recompute(PassContext& ctx) {
  const MemorySpec& mem = ctx.resolved.scenario->memory;
  check_pass_stages(ctx.table, mem.recompute.stages, mem.recompute_where,
                    "memory.recompute.stages");
  PassResult r = apply_recompute_pass(ctx.table, ctx.stage_costs, mem.recompute);
  ctx.table = std::move(r.table);
  return std::move(r.decision);
}

// The offload pass reads the idealized timings of the table it transforms (a replay of its own).
std::optional<PassDecision> offload(PassContext& ctx) {
  const MemorySpec& mem = ctx.resolved.scenario->memory;
  check_pass_stages(ctx.table, mem.offload.stages, mem.offload_where, "memory.offload.stages");
  if (ctx.resolved.offload.d2h.size() != static_cast<std::size_t>(ctx.table.devices)) {
    throw InputError(
        {Diagnostic{mem.offload_where, "memory.offload",
                    "cannot offload: no host is reachable from every GPU (see docs/memory.md)"}});
  }
  OffloadSettings settings = mem.offload;
  settings.d2h = ctx.resolved.offload.d2h;
  settings.h2d = ctx.resolved.offload.h2d;
  const SimulationResult before =
      simulate(make_engine_input(ctx.resolved, ctx.table, ctx.stage_costs, Replay::Idealized));
  ++ctx.replays;
  PassResult o = apply_offload_pass(ctx.table, ctx.stage_costs, timings_of(before), settings);
  ctx.table = std::move(o.table);
  return std::move(o.decision);
}

bool wants_pairing(const ResolvedScenario& r, const std::vector<StageCost>& costs) {
  return r.scenario->parallelism.overlap.a2a && has_all_to_all(costs);
}
bool wants_recompute(const ResolvedScenario& r, const std::vector<StageCost>& /*costs*/) {
  return r.scenario->memory.recompute.policy != MemoryPolicy::None;
}
bool wants_offload(const ResolvedScenario& r, const std::vector<StageCost>& /*costs*/) {
  return r.scenario->memory.offload.policy != MemoryPolicy::None;
}

std::string_view recompute_refusal(const ResolvedScenario& r) {
  return r.scenario->memory.recompute.in_backward()
             ? "memory.recompute's pass logs every backward of the table"
             : "memory.recompute with granularity stage rewrites the whole table";
}
std::string_view offload_refusal(const ResolvedScenario& /*r*/) {
  return "memory.offload rewrites the whole table";
}

}  // namespace

std::span<const TablePass> table_passes() {
  // The pairing runs first (it fuses the table's own ops); recompute before offload, which reads
  // the idealized timings of the recomputed table. Pairing needs no stream refusal of its own:
  // the all-to-all it pairs already keeps a schedule from the streamed replay.
  static const TablePass passes[] = {
      {"a2a-pairing", wants_pairing, nullptr, pair_for_a2a_overlap},
      {"recompute", wants_recompute, recompute_refusal, recompute},
      {"offload", wants_offload, offload_refusal, offload},
  };
  return passes;
}

std::vector<const TablePass*> wanted_passes(const ResolvedScenario& resolved,
                                            const std::vector<StageCost>& stage_costs) {
  const std::vector<std::string>& skip = resolved.scenario->command_line.skip_passes;
  for (const std::string& name : skip) {
    const auto all = table_passes();
    if (std::none_of(all.begin(), all.end(), [&](const TablePass& p) { return p.name == name; })) {
      std::vector<std::string_view> names;
      for (const TablePass& p : all) names.push_back(p.name);
      throw InputError(fmt::format("--skip-pass: '{}' is not a pass (allowed: {})", name,
                                   fmt::join(names, ", ")));
    }
  }
  std::vector<const TablePass*> out;
  for (const TablePass& pass : table_passes()) {
    if (pass.wanted(resolved, stage_costs) &&
        std::find(skip.begin(), skip.end(), pass.name) == skip.end())
      out.push_back(&pass);
  }
  return out;
}

std::vector<PassDecision> run_table_passes(PassContext& ctx, const std::string& schedule_name,
                                           RunEffort& effort) {
  const std::vector<std::string>& skip = ctx.resolved.scenario->command_line.skip_passes;
  for (const TablePass& pass : table_passes()) {
    if (pass.wanted(ctx.resolved, ctx.stage_costs) &&
        std::find(skip.begin(), skip.end(), pass.name) != skip.end())
      effort.skipped_passes.emplace_back(pass.name);
  }
  std::vector<PassDecision> decisions;
  for (const TablePass* pass : wanted_passes(ctx.resolved, ctx.stage_costs)) {
    const auto started = std::chrono::steady_clock::now();
    std::optional<PassDecision> decision = pass->run(ctx);
    effort.passes.push_back(PassTime{std::string(pass->name), seconds_since(started)});
    if (decision) {
      try {
        require_valid_table(ctx.table,
                            fmt::format("{} after the {} pass", schedule_name, pass->name));
      } catch (const InvalidTableError& e) {
        throw InputError({Diagnostic{ctx.request.where, "schedules", e.what()}});
      }
      decisions.push_back(std::move(*decision));
    }
  }
  return decisions;
}

}  // namespace bubblesim
