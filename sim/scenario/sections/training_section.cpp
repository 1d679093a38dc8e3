#include "sim/scenario/sections/training_section.h"

#include <fmt/format.h>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/pipeline_section.h"

namespace bubblesim {
namespace {

/// A global batch beyond any published run (the Llama 3 405B run's 16M tokens are 2,048
/// sequences of 8,192) by orders of magnitude; the bound keeps products within 64 bits.
constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 40;

/// "960 or 1,024" (multiples of `step` nearest `n`), in the unit the user wrote (x `unit`).
std::string nearest_multiples(std::int64_t n, std::int64_t step, std::int64_t unit) {
  const std::int64_t below = n / step * step;
  const std::int64_t above = below + step;
  if (below == 0) return fmt::format("{}", above * unit);
  return fmt::format("{} or {}", below * unit, above * unit);
}

}  // namespace

void read_training_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("training");
  if (!node) return;
  DiagnosticList& diags = context.diags();
  MapReader tr(*node, diags, {"global_batch", "global_batch_tokens"});
  if (!node->is_map()) return;
  auto seqs = tr.get("global_batch");
  auto tokens = tr.get("global_batch_tokens");
  // Each message is located at (and prefixed with the path of) the key it is about.
  if (seqs && tokens) {
    tokens->error(diags,
                  "give the global batch once, in sequences (global_batch) or in tokens "
                  "(global_batch_tokens), not both");
    return;
  }
  if (!seqs && !tokens) {
    node->error(diags,
                "missing required key 'global_batch' (sequences per optimizer step) or "
                "'global_batch_tokens'");
    return;
  }
  const YamlNode& at = seqs ? *seqs : *tokens;
  auto given = at.as_integer(diags, 1, kMaxGlobalBatch);
  if (!given) return;
  // Tokens become sequences of model.seq_len.
  std::int64_t unit = 1;
  if (tokens) {
    if (!sc.model || sc.model->seq_len <= 0) {
      at.error(diags,
               "tokens need the sequence length of a model (model.seq_len); without a model "
               "give training.global_batch in sequences");
      return;
    }
    unit = sc.model->seq_len;
    if (*given % unit != 0) {
      at.error(diags, fmt::format("{} tokens are not whole sequences of model.seq_len {} (the "
                                  "nearest that are: {})",
                                  *given, unit, nearest_multiples(*given, unit, 1)));
      return;
    }
  }
  const std::int64_t sequences = *given / unit;
  const std::int64_t mbs = sc.model ? sc.model->micro_batch_size : 1;
  const std::int64_t dp = sc.parallelism.dp;
  const std::int64_t step = mbs * dp;
  const std::string per_step =
      fmt::format("micro_batch_size x dp = {} x {} = {} sequences", mbs, dp, step);
  if (sequences % step != 0) {
    at.error(diags, fmt::format("{} {} do not make a whole number of microbatches per pipeline "
                                "({}; the nearest that divide: {})",
                                *given, tokens ? "tokens" : "sequences", per_step,
                                nearest_multiples(sequences, step, unit)));
    return;
  }
  const std::int64_t m = sequences / step;
  if (m > kMaxMicrobatches) {
    at.error(diags, fmt::format("{} makes {} microbatches per pipeline ({}), over the limit of {}",
                                *given, m, per_step, kMaxMicrobatches));
    return;
  }
  // pipeline.microbatches, when given, must say the same.
  std::optional<YamlNode> pipe = context.section("pipeline");
  if (pipe && pipe->is_map() && pipe->raw()["microbatches"] && sc.microbatches > 0 &&
      sc.microbatches != m) {
    at.error(diags, fmt::format("{} makes {} microbatches per pipeline ({}), but "
                                "pipeline.microbatches is {}; give one of them",
                                *given, m, per_step, sc.microbatches));
    return;
  }
  sc.microbatches = static_cast<std::int32_t>(m);
  if (!pipe || !pipe->is_map() || !pipe->raw()["microbatches"])
    sc.microbatches_where = at.location();
}

}  // namespace bubblesim
