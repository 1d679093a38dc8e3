#pragma once
// Which layers each pipeline stage (or each chunk of a multi-chunk table) holds
// (`model.layers_per_stage`, `model.layers_per_chunk`; docs/models.md). The first stage (chunk)
// also holds the embedding, the last the final norm, the LM head and the loss.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/costmodel/model_spec.h"

namespace bubblesim {

/// Megatron's split: layers / stages each, the first (layers mod stages) stages one more.
/// Throws std::invalid_argument when layers < stages.
std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t stages);

/// Layers of each of the p pipeline stages: `layers_per_stage` or split_layers.
std::vector<std::int64_t> stage_layers(const TransformerModel& model, std::int32_t stages);

/// Layers of each of the p x chunks table stages (virtual stages, model order) of a table with
/// `chunks` stages per device: `layers_per_chunk` when it has p x chunks entries, else Megatron's
/// interleaved split (layers / (p chunks) each) when that divides evenly; nullopt otherwise (the
/// stage's costs are then divided evenly among its chunks, CostProfile::for_table).
std::optional<std::vector<std::int64_t>> chunk_layers(const TransformerModel& model,
                                                      std::int32_t stages, std::int32_t chunks);

/// Chunks per device `layers_per_chunk` describes (its length / p), 0 when absent.
std::int32_t layout_chunks(const TransformerModel& model, std::int32_t stages);

/// "" when the layout keys fit `stages`, else what is wrong (length, sum, a middle stage with
/// nothing to do).
std::string layout_error(const TransformerModel& model, std::int32_t stages);

}  // namespace bubblesim
