#include "sim/costmodel/stage_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
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

namespace {

/// The parts of a balanced split as the DP sees them: part k holding layers [i, j) costs the
/// layers' sum plus the first part's and the last part's extras, in one fixed order of floating
/// additions (so that every comparison below sees the values the reference DP saw).
class SplitCosts {
 public:
  SplitCosts(const std::vector<double>& layer_cost, std::size_t parts, double first_extra,
             double last_extra)
      : parts_(parts), first_(first_extra), last_(last_extra), prefix_(layer_cost.size() + 1, 0.0) {
    for (std::size_t i = 0; i < layer_cost.size(); ++i) prefix_[i + 1] = prefix_[i] + layer_cost[i];
  }
  std::size_t layers() const { return prefix_.size() - 1; }
  double cost(std::size_t k, std::size_t i, std::size_t j) const {
    return prefix_[j] - prefix_[i] + (k == 0 ? first_ : 0.0) + (k + 1 == parts_ ? last_ : 0.0);
  }
  bool middle(std::size_t k) const { return k > 0 && k + 1 < parts_; }
  /// Whether every part can keep within `limit`: the parts taking as many layers as fit in
  /// turn reach the last layer (an empty middle part is then given a layer from a neighbour,
  /// which only shrinks it), and there is a layer for every middle part.
  bool fits(double limit) const {
    const std::size_t n = layers();
    return parts_ <= 1 ? cost(0, 0, n) <= limit : n + 2 >= parts_ && reach(limit).back() == n;
  }
  /// Where part k can end on a split within `limit`: [first, second] (empty when first >
  /// second). An end is reachable from the left when parts 0..k fit before it with a layer for
  /// each middle one, and from the right when parts k+1.. fit after it likewise; the
  /// furthest-reaching parts bound both (every end between is reachable, parts only shrinking).
  std::vector<std::pair<std::size_t, std::size_t>> ends(double limit) const {
    const std::size_t n = layers();
    const std::vector<std::size_t> r = reach(limit);
    // The smallest start of each part, parts taking as many layers as fit from the right.
    std::vector<std::size_t> q(parts_, n + 1);
    std::size_t e = n;
    for (std::size_t k = parts_; k-- > 0;) {
      if (e > n || cost(k, e, e) > limit) break;
      std::size_t i = e;
      while (i > 0 && cost(k, i - 1, e) <= limit) --i;
      q[k] = e = i;
    }
    std::vector<std::pair<std::size_t, std::size_t>> out(parts_, {n + 1, 0});
    for (std::size_t k = 0; k + 1 < parts_; ++k) {
      const std::size_t before = k;                                    // a layer per middle 1..k
      const std::size_t after = parts_ >= k + 2 ? parts_ - 2 - k : 0;  // middles k+1..
      if (r[k] > n || q[k + 1] > n || n < after) continue;
      out[k] = {std::max(before, q[k + 1]), std::min(r[k], n - after)};
    }
    if (r.back() == n) out.back() = {n, n};
    return out;
  }

 private:
  /// The furthest end of each part, parts taking as many layers as fit in turn (none allowed);
  /// n + 1 from the first part that cannot fit even empty.
  std::vector<std::size_t> reach(double limit) const {
    const std::size_t n = layers();
    std::vector<std::size_t> r(parts_, n + 1);
    std::size_t s = 0;
    for (std::size_t k = 0; k < parts_; ++k) {
      if (cost(k, s, s) > limit) break;
      std::size_t j = s;
      while (j < n && cost(k, s, j + 1) <= limit) ++j;
      r[k] = s = j;
    }
    return r;
  }

  std::size_t parts_;
  double first_, last_;
  std::vector<double> prefix_;
};

/// The smallest limit every part can keep to: the smallest double for which the parts fit
/// (fits() is monotone in the limit), found by bisection over the doubles' order.
double smallest_largest_part(const SplitCosts& costs, std::size_t parts) {
  double hi = costs.cost(0, 0, costs.layers());  // everything in part 0 plus both extras...
  if (parts > 1) hi += costs.cost(parts - 1, costs.layers(), costs.layers());
  hi = std::max(hi, 0.0) * 2 + 1;
  while (!costs.fits(hi)) {
    hi *= 2;
    if (!std::isfinite(hi))
      throw std::invalid_argument("layer costs that no split can hold (not finite)");
  }
  double lo = 0.0;
  if (costs.fits(lo)) return lo;
  // Non-negative doubles order like their bit patterns.
  auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  std::uint64_t a = bits(lo), b = bits(hi);  // fits(b), not fits(a)
  while (b - a > 1) {
    const std::uint64_t mid = a + (b - a) / 2;
    if (costs.fits(std::bit_cast<double>(mid)))
      b = mid;
    else
      a = mid;
  }
  return std::bit_cast<double>(b);
}

}  // namespace

std::vector<std::int64_t> balanced_split(const std::vector<double>& layer_cost, std::int32_t parts,
                                         double first_extra, double last_extra) {
  const auto n = layer_cost.size();
  const auto k_parts = static_cast<std::size_t>(parts);
  if (parts <= 0 || (parts > 2 && n < k_parts - 2)) {
    throw std::invalid_argument(
        fmt::format("{} layers cannot fill the {} middle parts of a balanced split", n, parts - 2));
  }
  const SplitCosts costs(layer_cost, k_parts, first_extra, last_extra);
  // 1. The smallest largest part (by bisection: each probe is one greedy pass over the layers).
  const double largest = smallest_largest_part(costs, k_parts);
  // 2. Among the splits within it (a hair above, as floating sums may differ in the last bit),
  // the smallest sum of squared part costs: a DP over (part, end), each part's end restricted to
  // where it can end within the limit and each part's start to the layers the limit allows, so
  // the work is the window sizes summed, not parts x layers^2. best[k][j]: the smallest sum of
  // squares of parts 0..k holding layers [0, j); the first start found wins ties.
  const double limit = largest * (1.0 + 1e-12) + 1e-300;
  const auto ends = costs.ends(limit);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> prev, cur;
  std::vector<std::vector<std::size_t>> from(k_parts);
  auto window = [&](std::size_t k) { return ends[k]; };
  {
    const auto [a, b] = window(0);
    prev.assign(b >= a ? b - a + 1 : 0, kNone);
    for (std::size_t j = a; j <= b; ++j) {
      const double c = costs.cost(0, 0, j);
      if (c <= limit) prev[j - a] = c * c;
    }
  }
  for (std::size_t k = 1; k < k_parts; ++k) {
    const auto [pa, pb] = window(k - 1);
    const auto [a, b] = window(k);
    cur.assign(b >= a ? b - a + 1 : 0, kNone);
    from[k].assign(cur.size(), 0);
    std::size_t lo = pa;  // the first start within the limit, moving right as j does
    for (std::size_t j = a; j <= b; ++j) {
      while (lo < j && lo <= pb && costs.cost(k, lo, j) > limit) ++lo;
      const std::size_t last = std::min(pb, costs.middle(k) && j > 0 ? j - 1 : j);
      if (costs.middle(k) && j == 0) continue;  // a middle part holds a layer
      for (std::size_t i = std::max(lo, pa); i <= last; ++i) {
        const double before = prev[i - pa];
        if (before == kNone) continue;
        const double c = costs.cost(k, i, j);
        if (c > limit) continue;
        const double v = before + c * c;
        if (v < cur[j - a]) {
          cur[j - a] = v;
          from[k][j - a] = i;
        }
      }
    }
    prev.swap(cur);
  }
  if (prev.empty() || prev.back() == kNone)
    throw std::logic_error("balanced_split: no split within the largest part's cost");
  std::vector<std::int64_t> out(k_parts, 0);
  std::size_t j = n;
  for (std::size_t k = k_parts; k-- > 0;) {
    const std::size_t i = k == 0 ? 0 : from[k][j - window(k).first];
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
