#include "sim/costmodel/stage_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
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
  if (model.split.balanced)
    throw std::logic_error("layers_per_stage: balanced is placed by model_costs from the costs");
  if (model.split.counts_given()) {
    const std::string error = layout_error(model, stages);
    if (!error.empty()) throw std::invalid_argument(error);
    if (model.split.megatron) return megatron_split(model, stages);
    return model.split.per_stage;
  }
  return split_layers(model.layers, stages);
}

namespace {

/// Megatron-Core's uneven split (TransformerConfig's checks and get_num_layers_to_build): the
/// stages `first` and `last` do not fix share the other layers evenly; with the embedding or
/// the loss counted as a layer, layers + those must divide evenly and the first (last) stage
/// holds one layer fewer. Returns the counts, or what is wrong as `error`.
std::vector<std::int64_t> megatron_counts(const TransformerModel& model, std::int32_t stages,
                                          std::string& error) {
  const LayerSplit::Megatron& mg = *model.split.megatron;
  const auto p = static_cast<std::size_t>(stages);
  std::vector<std::int64_t> out(p, 0);
  if (mg.first || mg.last) {
    const std::int64_t fixed = (mg.first ? 1 : 0) + (mg.last ? 1 : 0);
    const std::int64_t given = mg.first.value_or(0) + mg.last.value_or(0);
    const std::int64_t rest = model.layers - given, shared = stages - fixed;
    const std::string split = fmt::format("layers_per_stage {{first: {}, last: {}}}",
                                          mg.first ? std::to_string(*mg.first) : "-",
                                          mg.last ? std::to_string(*mg.last) : "-");
    if (stages < fixed) {
      error = fmt::format("{}: a pipeline of {} stage has no separate first and last stage", split,
                          stages);
    } else if (rest < 0) {
      error = fmt::format("{}: the first and last stages hold {} layers, more than the model's {}",
                          split, given, model.layers);
    } else if (shared == 0 && rest != 0) {
      error = fmt::format(
          "{}: with {} stages the first and last stages hold every layer, so they must add up "
          "to the model's {} (they add up to {})",
          split, stages, model.layers, given);
    } else if (shared > 0 && rest < shared) {
      error = fmt::format(
          "{}: {} of the model's {} layers are left for the other {} stages, which need at "
          "least one layer each",
          split, rest, model.layers, shared);
    } else if (shared > 0 && rest % shared != 0) {
      error = fmt::format(
          "{}: the other {} of {} layers must split evenly over the other {} stages, as "
          "Megatron-Core requires",
          split, rest, model.layers, shared);
    }
    if (!error.empty()) return {};
    for (std::size_t i = 0; i < p; ++i) out[i] = shared > 0 ? rest / shared : 0;
    if (mg.first) out.front() = *mg.first;
    if (mg.last) out.back() = *mg.last;
    return out;
  }
  const std::int64_t extra = (mg.embedding_as_layer ? 1 : 0) + (mg.loss_as_layer ? 1 : 0);
  const std::int64_t units = model.layers + extra;
  if (units % stages != 0 || units / stages < (stages == 1 ? extra : 1)) {
    error = fmt::format(
        "layers_per_stage with the {} counted as a layer: {} layers + {} must divide evenly over "
        "{} stages, as Megatron-Core requires",
        extra == 2              ? "embedding and the loss"
        : mg.embedding_as_layer ? "embedding"
                                : "loss",
        model.layers, extra, stages);
    return {};
  }
  std::fill(out.begin(), out.end(), units / stages);
  if (mg.embedding_as_layer) --out.front();
  if (mg.loss_as_layer) --out.back();
  return out;
}

}  // namespace

std::vector<std::int64_t> megatron_split(const TransformerModel& model, std::int32_t stages) {
  std::string error;
  std::vector<std::int64_t> out = megatron_counts(model, stages, error);
  if (!error.empty()) throw std::invalid_argument(error);
  return out;
}

std::vector<std::int64_t> balanced_split(const std::vector<double>& layer_cost, std::int32_t parts,
                                         double first_extra, double last_extra) {
  const auto n = layer_cost.size();
  const auto k_parts = static_cast<std::size_t>(parts);
  if (parts <= 0 || (parts > 2 && n < k_parts - 2)) {
    throw std::invalid_argument(
        fmt::format("{} layers cannot fill the {} middle parts of a balanced split", n, parts - 2));
  }
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + layer_cost[i];
  // Part k holding layers [i, j): its cost.
  auto cost = [&](std::size_t k, std::size_t i, std::size_t j) {
    return prefix[j] - prefix[i] + (k == 0 ? first_extra : 0.0) +
           (k + 1 == k_parts ? last_extra : 0.0);
  };
  auto middle = [&](std::size_t k) { return k > 0 && k + 1 < k_parts; };
  constexpr double kNone = std::numeric_limits<double>::infinity();
  // Pass 1: best[k][j], the smallest largest cost of parts 0..k holding layers [0, j).
  // Pass 2 (limit set): the smallest sum of squares with every part within the limit.
  std::vector<std::vector<double>> best(k_parts, std::vector<double>(n + 1, kNone));
  std::vector<std::vector<std::size_t>> from(k_parts, std::vector<std::size_t>(n + 1, 0));
  auto solve = [&](double limit) {
    for (auto& row : best) std::fill(row.begin(), row.end(), kNone);
    for (std::size_t j = 0; j <= n; ++j) {
      const double c = cost(0, 0, j);
      if (c <= limit) best[0][j] = limit == kNone ? c : c * c;
    }
    for (std::size_t k = 1; k < k_parts; ++k) {
      for (std::size_t j = 0; j <= n; ++j) {
        for (std::size_t i = 0; i <= j; ++i) {
          if ((middle(k) && i == j) || best[k - 1][i] == kNone) continue;
          const double c = cost(k, i, j);
          if (c > limit) continue;
          const double v = limit == kNone ? std::max(best[k - 1][i], c) : best[k - 1][i] + c * c;
          if (v < best[k][j]) {
            best[k][j] = v;
            from[k][j] = i;
          }
        }
      }
    }
    return best[k_parts - 1][n];
  };
  const double largest = solve(kNone);
  solve(largest * (1.0 + 1e-12) + 1e-300);
  std::vector<std::int64_t> out(k_parts, 0);
  std::size_t j = n;
  for (std::size_t k = k_parts; k-- > 0;) {
    const std::size_t i = k == 0 ? 0 : from[k][j];
    out[k] = static_cast<std::int64_t>(j - i);
    j = i;
  }
  return out;
}

std::int32_t layout_chunks(const TransformerModel& model, std::int32_t stages) {
  if (model.split.per_chunk.empty() || stages <= 0) return 0;
  return static_cast<std::int32_t>(model.split.per_chunk.size() / static_cast<std::size_t>(stages));
}

std::optional<std::vector<std::int64_t>> chunk_layers(const TransformerModel& model,
                                                      std::int32_t stages, std::int32_t chunks) {
  if (chunks <= 1 || stages <= 0) return std::nullopt;
  if (layout_chunks(model, stages) == chunks) return model.split.per_chunk;
  // layers_per_chunk written for another chunk count, or stages given as counts (or balanced,
  // which model_costs places itself): no layout is invented for this count.
  if (!model.split.per_chunk.empty() || model.split.balanced) return std::nullopt;
  const std::int64_t parts = static_cast<std::int64_t>(stages) * chunks;
  if (model.split.counts_given() || model.layers % parts != 0) return std::nullopt;
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
  if (model.split.balanced && model.layers < std::max<std::int64_t>(stages - 2, 1)) {
    return fmt::format(
        "layers_per_stage: balanced needs a layer for every stage but the first and the last: "
        "{} layers cannot fill the {} middle stages of {}",
        model.layers, stages - 2, stages);
  }
  if (model.split.megatron && stages > 0) {
    std::string error;
    (void)megatron_counts(model, stages, error);
    if (!error.empty()) return error;
  }
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
