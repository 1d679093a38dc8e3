#include "sim/runner/table_costs.h"

#include <fmt/format.h>

#include "sim/costmodel/stage_layout.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

/// "chunks: 3" when the schedule has a parameter setting its chunk count, else its name's shape.
std::string chunk_key(const ScheduleRequest& schedule, std::int32_t chunks) {
  for (const char* key : {"chunks", "waves"}) {
    if (!schedule.params.has(key)) continue;
    return fmt::format("{} params.{}: {}", schedule.name, key, schedule.params.integer(key));
  }
  return fmt::format("{} ({} chunks per device)", schedule.name, chunks);
}

}  // namespace

std::string chunk_layout_refusal(const ResolvedScenario& resolved, std::int32_t chunks,
                                 const ScheduleRequest& schedule) {
  const Scenario* sc = resolved.scenario;
  // Only where the model derives the costs: explicit stage costs are divided evenly (README).
  if (chunks <= 1 || sc == nullptr || !sc->model || !resolved.model_costs ||
      sc->costs.given.any() || resolved.costs.chunked.count(chunks) != 0)
    return "";
  const TransformerModel& model = *sc->model;
  const std::int64_t virtual_stages = std::int64_t{sc->stages} * chunks;
  std::string why;
  if (!model.split.per_chunk.empty()) {
    why = fmt::format("model.layers_per_chunk has {} counts, written for {} chunks per device",
                      model.split.per_chunk.size(), layout_chunks(model, sc->stages));
  } else if (model.split.counts_given()) {
    why = "model.layers_per_stage places layers per stage, not per chunk";
  } else if (model.split.balanced) {
    why = fmt::format("model.layers_per_stage: balanced needs {} layers for their middle ones",
                      virtual_stages - 2);
  } else {
    why = fmt::format("{} layers do not divide into {} equal chunks", model.layers, virtual_stages);
  }
  std::string counts;
  for (const auto& [v, list] : resolved.costs.chunked)
    counts += fmt::format("{}{}", counts.empty() ? "" : ", ", v);
  return fmt::format(
      "{} makes {} virtual stages on {} devices, but the model cannot be built that way: every "
      "chunk needs whole layers, the embedding on the first and the LM head and loss on the last, "
      "and {}. Chunk counts that split: {}; or state the split with model.layers_per_chunk ({} "
      "counts, 0 allowed) or model.layers_per_stage: balanced",
      chunk_key(schedule, chunks), virtual_stages, sc->stages, why,
      counts.empty() ? "none" : counts, virtual_stages);
}

std::vector<StageCost> table_costs(const ResolvedScenario& resolved, std::int32_t chunks,
                                   const ScheduleRequest& schedule) {
  const std::string refusal = chunk_layout_refusal(resolved, chunks, schedule);
  if (!refusal.empty()) throw InputError({Diagnostic{schedule.where, "schedules", refusal}});
  return resolved.costs.for_table(chunks);
}

}  // namespace bubblesim
