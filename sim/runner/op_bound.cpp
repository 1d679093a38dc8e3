#include "sim/runner/op_bound.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace bubblesim {
namespace {

constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

std::int64_t times(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

std::int64_t plus(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

// An integer shape parameter: the given value, else the generator's default, else nullopt.
std::optional<std::int64_t> shape_param(const Generator& generator, const ParamValues& params,
                                        const std::string& name) {
  auto given = params.all().find(name);
  if (given != params.all().end()) {
    if (const auto* v = std::get_if<std::int64_t>(&given->second)) return *v;
    return std::nullopt;
  }
  for (const ParamSpec& spec : generator.info.params) {
    if (spec.name != name || spec.optional_default) continue;
    if (const auto* v = std::get_if<std::int64_t>(&spec.default_value)) return *v;
  }
  return std::nullopt;
}

}  // namespace

OpBound minimum_ops(const Generator& generator, const ParamValues& params, std::int64_t stages,
                    std::int64_t microbatches) {
  OpBound bound;
  bound.shape = fmt::format("{} stages x {} microbatches", stages, microbatches);
  std::int64_t chunks = 1;
  if (auto v = shape_param(generator, params, "chunks"); v && *v > 1) {
    chunks = *v;
    bound.shape += fmt::format(" x {} chunks", chunks);
  } else if (auto w = shape_param(generator, params, "waves"); w && *w > 0) {
    chunks = times(2, *w);
    bound.shape += fmt::format(" x {} chunks ({} waves)", chunks, *w);
  }
  const std::int64_t stage_count = times(stages, chunks);
  bound.ops = times(times(2, stage_count), microbatches);
  bound.virtual_stages = stage_count;
  if (auto f = shape_param(generator, params, "pipelines"); f && *f > 1) {
    const std::int64_t replicas = times(2, *f);
    bound.ops = plus(bound.ops, times(replicas, stage_count));
    bound.virtual_stages = plus(bound.virtual_stages, times(replicas, stage_count));
    bound.shape += fmt::format(" (and {} replicas placing every stage)", replicas);
  }
  return bound;
}

std::int64_t sampled_work(std::int64_t samples, std::int64_t iterations, std::int64_t ops) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t per_replay = ops + kReplayOverheadOps;
  const std::int64_t per_sample =
      iterations > kMax / per_replay ? kMax : std::max<std::int64_t>(iterations, 1) * per_replay;
  return samples > kMax / per_sample ? kMax : samples * per_sample;
}

}  // namespace bubblesim
