#include "tools/costmodel/stage_layout.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace bubblesim {

std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t stages) {
  if (stages <= 0) throw std::invalid_argument("the pipeline needs at least one stage");
  if (layers < stages) {
    throw std::invalid_argument(fmt::format(
        "{} layers cannot be split over {} pipeline stages (each stage needs at least one layer)",
        layers, stages));
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(stages), layers / stages);
  for (std::int64_t i = 0; i < layers % stages; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

std::vector<std::int64_t> stage_layers(const TransformerModel& model, std::int32_t stages) {
  if (!model.split.per_stage.empty()) {
    const std::string error = layout_error(model, stages);
    if (!error.empty()) throw std::invalid_argument(error);
    return model.split.per_stage;
  }
  return split_layers(model.layers, stages);
}

std::int32_t layout_chunks(const TransformerModel& model, std::int32_t stages) {
  if (model.split.per_chunk.empty() || stages <= 0) return 0;
  return static_cast<std::int32_t>(model.split.per_chunk.size() / static_cast<std::size_t>(stages));
}

std::optional<std::vector<std::int64_t>> chunk_layers(const TransformerModel& model,
                                                      std::int32_t stages, std::int32_t chunks) {
  if (chunks <= 1 || stages <= 0) return std::nullopt;
  if (layout_chunks(model, stages) == chunks) return model.split.per_chunk;
  const std::int64_t parts = static_cast<std::int64_t>(stages) * chunks;
  if (!model.split.per_stage.empty() || model.layers % parts != 0) return std::nullopt;
  return std::vector<std::int64_t>(static_cast<std::size_t>(parts), model.layers / parts);
}

namespace {

std::string check_counts(const std::vector<std::int64_t>& counts, std::int64_t layers,
                         const char* key, const std::string& expected) {
  const std::int64_t sum = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  for (std::int64_t n : counts) {
    if (n < 0) return fmt::format("{} must not be negative, got {}", key, n);
  }
  if (sum != layers) {
    return fmt::format("{} sums to {} but the model has {} layers ({})", key, sum, layers,
                       expected);
  }
  return "";
}

}  // namespace

std::string layout_error(const TransformerModel& model, std::int32_t stages) {
  const auto p = static_cast<std::size_t>(stages);
  if (!model.split.per_stage.empty()) {
    if (model.split.per_stage.size() != p) {
      return fmt::format("layers_per_stage has {} entries but the pipeline has {} stages",
                         model.split.per_stage.size(), stages);
    }
    std::string e = check_counts(model.split.per_stage, model.layers, "layers_per_stage",
                                 "one count per pipeline stage");
    if (!e.empty()) return e;
    for (std::size_t i = 1; i + 1 < p; ++i) {
      if (model.split.per_stage[i] == 0) {
        return fmt::format(
            "layers_per_stage gives stage {} no layer: only the first stage (embedding) and the "
            "last (LM head) may hold none",
            i);
      }
    }
  }
  if (!model.split.per_chunk.empty()) {
    if (p == 0 || model.split.per_chunk.size() % p != 0 || model.split.per_chunk.size() < 2 * p) {
      return fmt::format(
          "layers_per_chunk has {} entries: it needs p x v (p = {} stages, v >= 2 chunks per "
          "device), in virtual-stage order",
          model.split.per_chunk.size(), stages);
    }
    return check_counts(model.split.per_chunk, model.layers, "layers_per_chunk",
                        "one count per virtual stage, 0 allowed");
  }
  return "";
}

}  // namespace bubblesim
