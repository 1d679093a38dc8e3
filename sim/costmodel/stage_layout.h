#pragma once
// Which layers each pipeline stage (or each chunk of a multi-chunk table) holds
// (`model.layers_per_stage`, `model.layers_per_chunk`; docs/models.md). The first stage (chunk)
// also holds the embedding, the last the final norm, the LM head and the loss.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/costmodel/model_spec.h"

namespace bubblesim {

/// Megatron's split: layers / stages each, the first (layers mod stages) stages one more.
/// Throws std::invalid_argument when layers < stages.
std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t stages);

/// Layers of each of the p pipeline stages: `layers_per_stage` (counts, or Megatron-Core's
/// keys: megatron_split) or split_layers (not for `layers_per_stage: balanced`, which
/// model_costs places from the stages' costs).
std::vector<std::int64_t> stage_layers(const TransformerModel& model, std::int32_t stages);

/// `layers_per_stage: {first, last}` or `{embedding_as_layer, loss_as_layer}` as Megatron-Core
/// splits them over `stages` (docs/models.md). Throws std::invalid_argument when they do not
/// divide as Megatron-Core requires.
std::vector<std::int64_t> megatron_split(const TransformerModel& model, std::int32_t stages);

/// Layers of each of the p x chunks table stages (virtual stages, model order) of a table with
/// `chunks` stages per device: `layers_per_chunk` when it has p x chunks entries, else Megatron's
/// interleaved split (layers / (p chunks) each) when that divides evenly and neither
/// `layers_per_chunk` (written for another count) nor `layers_per_stage` is given; nullopt
/// otherwise (the runner then refuses the table: sim/runner/resolve.h table_costs; with
/// `layers_per_stage: balanced` model_costs places the chunks itself).
std::optional<std::vector<std::int64_t>> chunk_layers(const TransformerModel& model,
                                                      std::int32_t stages, std::int32_t chunks);

/// `layers_per_stage: balanced`: whole-layer counts of `parts` contiguous parts (stages, or
/// virtual stages in model order) of layers costing `layer_cost` each (model order), the first
/// part also costing `first_extra` (the embedding), the last `last_extra` (final norm, LM head,
/// loss, MTP). The largest part's cost is the smallest whole layers allow (a DP over contiguous
/// partitions); among partitions reaching it, the one with the smallest sum of squared part
/// costs, the first found on ties. Middle parts hold at least one layer, the first and last may
/// hold none. Throws std::invalid_argument when the layers cannot fill the middle parts.
std::vector<std::int64_t> balanced_split(const std::vector<double>& layer_cost, std::int32_t parts,
                                         double first_extra, double last_extra);

/// Chunks per device `layers_per_chunk` describes (its length / p), 0 when absent.
std::int32_t layout_chunks(const TransformerModel& model, std::int32_t stages);

/// "" when the layout keys fit `stages`, else what is wrong (length, sum, a middle stage with
/// nothing to do).
std::string layout_error(const TransformerModel& model, std::int32_t stages);

}  // namespace bubblesim
