// Stage costs from the model: layouts (layers_per_stage, layers_per_chunk), the embedding and LM
// head on the first and last (virtual) stage, measured per-layer costs, ZeRO static memory,
// recompute granularity and the roofline efficiency model.
#include "sim/costmodel/model_costs.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>

#include "sim/costmodel/op_timing.h"
#include "sim/costmodel/stage_layout.h"

using namespace bubblesim;

namespace {

/// The zero-bubble paper's 1.5B model (Table 3): 22 layers, h 2304, 24 heads, s 1024, b 6.
TransformerModel zb_1p5b() {
  TransformerModel m;
  m.layers = 22;
  m.hidden = 2304;
  m.attention.heads = 24;
  m.seq_len = 1024;
  m.micro_batch_size = 6;
  m.embedding.vocab = 50257;
  m.embedding.tied = false;
  return m;
}

GpuSpec a100(double efficiency) {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(312e12);
  g.memory_bandwidth = Bandwidth::bytes_per_second(2.039e12);
  g.efficiency.constant = efficiency;
  return g;
}

ModelCostInputs inputs(const TransformerModel& m, const GpuSpec& g, std::int32_t stages) {
  ModelCostInputs in;
  in.model = m;
  in.gpu = g;
  in.stages = stages;
  return in;
}

}  // namespace

TEST_CASE("Megatron-Core's uneven split: first / last counts, embedding and loss as layers") {
  TransformerModel m = zb_1p5b();  // 22 layers
  m.split.megatron = LayerSplit::Megatron{};
  m.split.megatron->first = 1;
  m.split.megatron->last = 1;
  CHECK(stage_layers(m, 6) == std::vector<std::int64_t>{1, 5, 5, 5, 5, 1});
  CHECK(chunk_layers(m, 6, 2) == std::nullopt);  // stages placed, not chunks
  m.split.megatron->last.reset();
  CHECK(stage_layers(m, 8) == std::vector<std::int64_t>{1, 3, 3, 3, 3, 3, 3, 3});
  m.split.megatron->first = 2;  // 20 over 7 stages does not divide
  CHECK(layout_error(m, 8).find("must split evenly over the other 7 stages") != std::string::npos);
  CHECK_THROWS_AS(stage_layers(m, 8), std::invalid_argument);
  // The embedding and the loss each counted as a layer: 24 units over 8 stages, 3 each.
  m.split.megatron = LayerSplit::Megatron{};
  m.split.megatron->embedding_as_layer = true;
  m.split.megatron->loss_as_layer = true;
  CHECK(stage_layers(m, 8) == std::vector<std::int64_t>{2, 3, 3, 3, 3, 3, 3, 2});
  m.split.megatron->loss_as_layer = false;  // 23 units do not divide over 8
  CHECK(layout_error(m, 8).find("22 layers + 1 must divide evenly over 8") != std::string::npos);
}

TEST_CASE("Megatron's split and layers_per_stage") {
  CHECK(split_layers(10, 4) == std::vector<std::int64_t>{3, 3, 2, 2});
  TransformerModel m = zb_1p5b();
  CHECK(stage_layers(m, 8) == std::vector<std::int64_t>{3, 3, 3, 3, 3, 3, 2, 2});
  m.split.per_stage = {2, 3, 3, 3, 3, 3, 3, 2};  // the paper's: one fewer on the ends
  CHECK(stage_layers(m, 8) == m.split.per_stage);
  m.split.per_stage = {2, 3, 3, 3, 3, 3, 3, 3};
  CHECK(layout_error(m, 8) ==
        "layers_per_stage sums to 23 but the model has 22 layers (one count per pipeline stage)");
  m.split.per_stage = {3, 3, 3, 3, 3, 0, 4, 3};
  CHECK(layout_error(m, 8).find("gives stage 5 no layer") != std::string::npos);
  m.split.per_stage = {};
  m.split.per_chunk = std::vector<std::int64_t>(23, 1);
  CHECK(layout_error(m, 8).find("needs p x v") != std::string::npos);
}

TEST_CASE("first and last stage: embedding, LM head and loss, layer by layer") {
  TransformerModel m = zb_1p5b();
  m.split.per_stage = {2, 3, 3, 3, 3, 3, 3, 2};
  const ModelCosts c = model_costs(inputs(m, a100(0.5), 8));
  REQUIRE(c.stages.size() == 8);
  const StageBreakdown& first = c.stages[0];
  const StageBreakdown& mid = c.stages[3];
  const StageBreakdown& last = c.stages[7];
  CHECK(first.embedding);
  CHECK(last.lm_head);
  CHECK(mid.forward.layers == doctest::Approx(1.5 * last.forward.layers));
  // The one-number model: the head's 2 b s h V FLOPs per pass at 0.5 of 312 TFLOPS; the
  // memory-bound loss and the embedding lookup are folded into e (no time of their own).
  const double head = 2.0 * 6 * 1024 * 2304 * 50257 / (312e12 * 0.5);
  CHECK(last.forward.lm_head == doctest::Approx(head));
  CHECK(last.backward_input.lm_head == doctest::Approx(head));
  CHECK(last.backward_weight.lm_head == doctest::Approx(head));
  CHECK(first.forward.embedding == 0.0);
  CHECK(c.profile.stages[7].forward == last.forward.total());
  // The last stage keeps the fp32 softmax (4 b s V) with its activations, and the logits
  // gradient (2 b s V) until W.
  const double logits = 6.0 * 1024 * 50257;
  CHECK(last.memory.activation.as_double() - 2.0 / 3.0 * mid.memory.activation.as_double() ==
        doctest::Approx(4 * logits + 2 * 2 * 6 * 1024 * 2304.0));
  CHECK(last.memory.weight_grad.as_double() - 2.0 / 3.0 * mid.memory.weight_grad.as_double() ==
        doctest::Approx(2 * logits + 2 * 6 * 1024 * 2304.0));
}

TEST_CASE("layers_per_chunk: every chunk its own cost (the paper's 1F1B-I)") {
  TransformerModel m = zb_1p5b();
  // 24 virtual stages: the first holds only the embedding, the last only the LM head and loss.
  m.split.per_chunk = std::vector<std::int64_t>(24, 1);
  m.split.per_chunk.front() = 0;
  m.split.per_chunk.back() = 0;
  const ModelCosts c = model_costs(inputs(m, a100(0.5), 8));
  REQUIRE(c.chunked.count(3) == 1);
  const std::vector<StageCost> table = c.profile.for_table(3);
  REQUIRE(table.size() == 24);
  CHECK(table[0].forward == Time::zero());  // embedding: memory-bound only, e folds it in
  CHECK(table[0].static_memory.count() == std::llround(50257.0 * 2304 * 18));
  CHECK(table[1].forward == table[22].forward);
  CHECK(table[23].forward == Time::from_seconds(2.0 * 6 * 1024 * 2304 * 50257 / 156e12));
  // Two chunks per device are not described (and 22 % 16 != 0): no layout is invented for them
  // (the runner refuses such a table, sim/runner/table_costs.h).
  CHECK(c.profile.chunked.count(2) == 0);
  CHECK(c.profile.chunked.size() == 1);
  m.split.per_chunk = std::vector<std::int64_t>(16, 1);
  m.layers = 16;
  CHECK(chunk_layers(m, 4, 2).has_value() == false);  // written for 4 chunks of p = 4
  CHECK(chunk_layers(m, 4, 4) == m.split.per_chunk);
  m.split.per_chunk.clear();
  CHECK(chunk_layers(m, 4, 2) == std::vector<std::int64_t>(8, 2));  // Megatron's: 16 / 8
  m.split.per_stage = {4, 4, 4, 4};
  CHECK(chunk_layers(m, 4, 2).has_value() == false);  // stage counts do not place chunks
}

namespace {

// The DP balanced_split had before it was made to grow gently (parts x layers^2 steps, parts x
// layers memory): the reference the faster one must equal, split for split.
std::vector<std::int64_t> quadratic_balanced_split(const std::vector<double>& layer_cost,
                                                   std::int32_t parts, double first_extra,
                                                   double last_extra) {
  const auto n = layer_cost.size();
  const auto k_parts = static_cast<std::size_t>(parts);
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + layer_cost[i];
  auto cost = [&](std::size_t k, std::size_t i, std::size_t j) {
    return prefix[j] - prefix[i] + (k == 0 ? first_extra : 0.0) +
           (k + 1 == k_parts ? last_extra : 0.0);
  };
  auto middle = [&](std::size_t k) { return k > 0 && k + 1 < k_parts; };
  constexpr double kNone = std::numeric_limits<double>::infinity();
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

}  // namespace

TEST_CASE("balanced_split gives the quadratic DP's split on random instances") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int32_t parts = 1 + static_cast<std::int32_t>(rng() % 14);
    const std::size_t n = static_cast<std::size_t>(std::max(parts - 2, 0)) + rng() % 30;
    std::vector<double> w(n);
    // Few distinct costs (ties everywhere) or many; sometimes a heavy layer or a free one.
    const bool few = rng() % 2 == 0;
    for (double& x : w)
      x = few ? static_cast<double>(1 + rng() % 3) : static_cast<double>(rng() % 1000) / 37.0;
    const double first = static_cast<double>(rng() % 4) * (few ? 1.0 : 0.7);
    const double last = static_cast<double>(rng() % 6) * (few ? 0.5 : 1.3);
    INFO("trial ", trial, ": ", n, " layers, ", parts, " parts");
    CHECK(balanced_split(w, parts, first, last) == quadratic_balanced_split(w, parts, first, last));
  }
}

TEST_CASE("balanced_split: the smallest largest part, whole layers, ends may be empty") {
  // Uniform layers, no extras: Megatron's even split.
  CHECK(balanced_split(std::vector<double>(12, 1.0), 4, 0, 0) ==
        std::vector<std::int64_t>{3, 3, 3, 3});
  // A head worth two layers on the last part: it takes two layers fewer.
  CHECK(balanced_split(std::vector<double>(14, 1.0), 4, 0, 2.0) ==
        std::vector<std::int64_t>{4, 4, 4, 2});
  // An embedding worth one layer and a head worth 1.5 layers (Llama 3's "one layer fewer on the
  // first and last stage").
  const std::vector<std::int64_t> llama = balanced_split(std::vector<double>(30, 1.0), 8, 1, 1.5);
  CHECK(llama.front() == 3);
  CHECK(llama.back() == 3);
  // A head heavier than a whole stage: the last part holds no layer.
  CHECK(balanced_split(std::vector<double>(6, 1.0), 3, 0, 5.0) ==
        std::vector<std::int64_t>{3, 3, 0});
  // Middle parts need a layer.
  CHECK_THROWS_AS(balanced_split(std::vector<double>(2, 1.0), 5, 0, 0), std::invalid_argument);
  // Against every contiguous partition of small random instances: never a larger largest part.
  std::uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>((seed >> 33) % 1000) / 100.0 + 0.1;
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 3 + static_cast<std::size_t>(trial % 6);
    const int parts = 2 + trial % 3;
    std::vector<double> w(n);
    for (double& x : w) x = next();
    const double first = next(), last = next();
    const std::vector<std::int64_t> got = balanced_split(w, parts, first, last);
    auto largest = [&](const std::vector<std::int64_t>& counts) {
      double most = 0;
      std::size_t at = 0;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        double c = (k == 0 ? first : 0.0) + (k + 1 == counts.size() ? last : 0.0);
        for (std::int64_t i = 0; i < counts[k]; ++i) c += w[at++];
        most = std::max(most, c);
      }
      return most;
    };
    std::int64_t sum = 0;
    for (std::int64_t c : got) sum += c;
    CHECK(sum == static_cast<std::int64_t>(n));
    // Brute force: every composition of n into `parts` counts, middle ones at least 1.
    double best = 1e300;
    std::vector<std::int64_t> counts(static_cast<std::size_t>(parts), 0);
    auto search = [&](auto&& self, std::size_t k, std::int64_t left) -> void {
      if (k + 1 == counts.size()) {
        counts[k] = left;
        best = std::min(best, largest(counts));
        return;
      }
      const std::int64_t low = k > 0 ? 1 : 0;
      for (std::int64_t c = low; c <= left; ++c) {
        counts[k] = c;
        self(self, k + 1, left - c);
      }
    };
    search(search, 0, static_cast<std::int64_t>(n));
    CHECK(largest(got) == doctest::Approx(best));
    for (std::size_t k = 1; k + 1 < got.size(); ++k) CHECK(got[k] >= 1);
  }
}

TEST_CASE("layers_per_stage: balanced places a model's layers by its stage costs") {
  TransformerModel m = zb_1p5b();
  m.split.balanced = true;
  const ModelCosts c = model_costs(inputs(m, a100(0.5), 8));
  std::int64_t layers = 0;
  double most = 0, sum = 0;
  for (const StageBreakdown& s : c.stages) {
    layers += s.layers;
    const double t = s.forward.seconds() + s.backward_input.seconds() + s.backward_weight.seconds();
    most = std::max(most, t);
    sum += t;
  }
  CHECK(layers == 22);
  CHECK(c.stages.back().layers < c.stages[3].layers);  // the head's stage holds fewer
  // No worse than Megatron's split, and chunk layouts for every count the layers can fill.
  TransformerModel plain = zb_1p5b();
  const ModelCosts d = model_costs(inputs(plain, a100(0.5), 8));
  double plain_most = 0;
  for (const StageBreakdown& s : d.stages) {
    plain_most = std::max(
        plain_most, s.forward.seconds() + s.backward_input.seconds() + s.backward_weight.seconds());
  }
  CHECK(most <= plain_most);
  CHECK(c.chunked.count(2) == 1);  // 16 virtual stages: 22 layers fill the 14 middle ones
  CHECK(c.chunked.count(3) == 1);  // 24: 22 fill the 22 middle ones
  CHECK(c.chunked.count(4) == 0);  // 32: they cannot
  m.layers = 5;
  CHECK(layout_error(m, 8).find("balanced needs a layer for every stage") != std::string::npos);
}

TEST_CASE("costs.per_layer: layers as measured, the head at the efficiency W shows") {
  TransformerModel m = zb_1p5b();
  m.split.per_stage = {2, 3, 3, 3, 3, 3, 3, 2};
  ModelCostInputs in = inputs(m, a100(1.0), 8);
  in.gpu.efficiency = EfficiencyModel{};  // not given: the measured layers decide
  MeasuredLayer layer;                    // the zero-bubble paper's Table 9 / 3 layers
  layer.forward = Time::from_seconds(18.522e-3 / 3);
  layer.backward_input = Time::from_seconds(18.086e-3 / 3);
  layer.backward_weight = Time::from_seconds(9.337e-3 / 3);
  in.per_layer = layer;
  const ModelCosts c = model_costs(in);
  CHECK(c.stages[3].forward.total() == Time::from_seconds(18.522e-3));
  const double w_flops = 24.0 * 6 * 1024 * 2304 * 2304;
  const double e_w = w_flops / (312e12 * 9.337e-3 / 3);
  const double gemm = 2.0 * 6 * 1024 * 2304 * 50257 / (312e12 * e_w);
  const double logits = 6.0 * 1024 * 50257, hidden = 6.0 * 1024 * 2304 * 2;
  CHECK(c.stages[7].forward.lm_head ==
        doctest::Approx(gemm + (38 * logits + 2 * hidden) / (0.8 * 2.039e12)));
  CHECK(c.stages[7].backward_weight.lm_head == doctest::Approx(gemm));
  CHECK(c.efficiency_note.find("W") != std::string::npos);
}

TEST_CASE("static memory by ZeRO level: parameters x bytes per parameter") {
  CHECK(static_bytes_per_parameter(2, ZeroSpec{0, 8}) == 18.0);
  CHECK(static_bytes_per_parameter(2, ZeroSpec{1, 8}) == 2 + 4 + 12.0 / 8);
  CHECK(static_bytes_per_parameter(2, ZeroSpec{2, 8}) == 2 + 16.0 / 8);
  CHECK(static_bytes_per_parameter(2, ZeroSpec{3, 8}) == 18.0 / 8);
  CHECK(static_bytes_per_parameter(4, ZeroSpec{0, 1}) == 16.0);
  TransformerModel m = zb_1p5b();
  ModelCostInputs in = inputs(m, a100(0.5), 8);
  in.zero = ZeroSpec{1, 4};
  const ModelCosts c = model_costs(in);
  double total = 0;
  for (const StageBreakdown& s : c.stages) {
    CHECK(s.memory.static_memory.count() == std::llround(s.parameters_per_gpu * 9.0));
    total += s.parameters_per_gpu;
  }
  CHECK(total == c.parameters);  // untied, no TP: every parameter on exactly one GPU
}

TEST_CASE("recompute: selective adds the attention core to B, full keeps layer inputs") {
  TransformerModel m = zb_1p5b();
  m.attention.kind = AttentionKind::Standard;
  ModelCostInputs in = inputs(m, a100(0.5), 8);
  const ModelCosts none = model_costs(in);
  in.recompute.policy = MemoryPolicy::Selective;
  const ModelCosts selective = model_costs(in);
  const double s = 1024, b = 6, h = 2304, a = 24;
  CHECK(selective.stages[1].backward_input.recompute ==
        doctest::Approx(3 * 4 * b * s * s * h / 156e12));
  CHECK(none.stages[1].memory.activation.as_double() -
            selective.stages[1].memory.activation.as_double() ==
        3 * 5 * a * s * s * b);
  // A whole-stage R op (granularity stage) of the first layer of each stage.
  in.recompute.policy = MemoryPolicy::Full;
  in.recompute.granularity = RecomputeGranularity::Stage;
  in.recompute.layers = 1;
  const ModelCosts full = model_costs(in);
  CHECK(full.stages[1].recompute.total() == none.stages[1].forward.total() / 3);
  CHECK(full.stages[1].memory.stage_input.as_double() ==
        doctest::Approx(2.0 / 3 * none.stages[1].memory.activation.as_double() + b * s * h * 2));
  CHECK(full.stages[1].memory.activation == none.stages[1].memory.activation);
  CHECK(full.stages[1].backward_input.total() == none.stages[1].backward_input.total());
}

TEST_CASE("recompute per unit inside B: F keeps the units' inputs, B redoes them and holds one") {
  TransformerModel m = zb_1p5b();  // GeLU, no dropout
  m.attention.kind = AttentionKind::Flash;
  ModelCostInputs in = inputs(m, a100(0.5), 8);
  const ModelCosts none = model_costs(in);
  const double s = 1024, b = 6, h = 2304, e = 2;
  const double input = s * b * h * e;  // one layer's input, its checkpoint
  // Stage 1 holds 3 layers (22 on 8 stages, Megatron's split); one layer's M_B:
  const double layer = none.stages[1].memory.activation.as_double() / 3;
  in.recompute.policy = MemoryPolicy::Full;  // granularity layer, one unit per layer
  const ModelCosts full = model_costs(in);
  const StageBreakdown& one = full.stages[1];
  CHECK(one.memory.activation.as_double() == doctest::Approx(3 * input));
  CHECK(one.memory.recompute_units == 3);
  CHECK(one.memory.recompute_unit.as_double() == doctest::Approx(layer - input));
  CHECK(one.memory.not_stored.as_double() == doctest::Approx(3 * layer - 3 * input));
  // B redoes the three layers' forward (no TP, no ZeRO here: the forward is the layers').
  CHECK(one.backward_input.recompute == doctest::Approx(none.stages[1].forward.seconds()));
  CHECK(one.backward_input.total() == Time::from_seconds(none.stages[1].backward_input.seconds() +
                                                         none.stages[1].forward.seconds()));
  const StageCost c = one.cost();
  CHECK(c.backward_recompute.units == 3);
  CHECK(c.backward_recompute.time == Time::from_seconds(one.backward_input.recompute));
  // R (the optimizer's whole-stage op) redoes the stage's forward from its input.
  CHECK(c.recompute == c.forward);

  // Megatron's uniform method with 2 layers a unit: ceil(3 / 2) = 2 units, the first of 2 layers.
  in.recompute.unit_layers = 2;
  const StageBreakdown two = model_costs(in).stages[1];
  CHECK(two.memory.recompute_units == 2);
  CHECK(two.memory.activation.as_double() == doctest::Approx(2 * input));
  CHECK(two.memory.recompute_unit.as_double() == doctest::Approx(2 * layer - input));
  in.recompute.unit_layers.reset();
  // Megatron's block method: only the first layer; the other two keep their activations.
  in.recompute.layers = 1;
  const StageBreakdown block = model_costs(in).stages[1];
  CHECK(block.memory.recompute_units == 1);
  CHECK(block.memory.activation.as_double() == doctest::Approx(2 * layer + input));
  CHECK(block.backward_input.recompute == doctest::Approx(none.stages[1].forward.layers / 3));
  in.recompute.layers.reset();
  // torchtitan's every-second layer: floor(3 / 2) = 1 layer of the three.
  in.recompute.every = 2;
  const StageBreakdown every = model_costs(in).stages[1];
  CHECK(every.memory.recompute_units == 1);
  CHECK(every.memory.activation.as_double() == doctest::Approx(2 * layer + input));
}

TEST_CASE("recompute op: torchtitan's save list keeps wq, wv, w1, w2 and the attention output") {
  TransformerModel m = zb_1p5b();
  m.attention.kind = AttentionKind::Flash;
  m.mlp.kind = MlpKind::Swiglu;
  m.mlp.ffn_hidden = 6144;
  m.bias = false;
  const ComponentWork layer = transformer_layer_work(m, Sharding{});
  const double s = 1024, b = 6, h = 2304, a = 24, f = 6144, e = 2, T = s * b;
  // Saved per layer: the input (T h), Q and V (T h each: no GQA), the attention output (T h),
  // its fp32 log-sum-exp (4 b a s), w1's output (T f) and w2's (T h).
  CHECK(layer.op.saved_bytes == doctest::Approx(T * e * (h + h + h + h + f + h) + 4 * b * a * s));
  // Rebuilt while B runs the layer: the rest of its M_B (norm outputs 3 T h of the 4 norm and
  // GEMM inputs, K, w3's output and the product).
  CHECK(layer.op.unit_bytes ==
        doctest::Approx(layer.activation_bytes - T * e * (h + h + h + h + f) - 4 * b * a * s));
  // Recomputed: the even matmuls wk, wo, w3 (2 T h h, 2 T h h, 2 T h f FLOPs) and the
  // memory-bound forward kernels.
  CHECK(layer.op.recompute.gemm_flops() == doctest::Approx(2 * T * h * (h + h + f)));
  CHECK(layer.op.recompute.memory_bytes() == doctest::Approx(layer.forward.memory_bytes()));
  ModelCostInputs in = inputs(m, a100(0.5), 8);
  const ModelCosts none = model_costs(in);
  in.recompute.policy = MemoryPolicy::Op;
  const ModelCosts op = model_costs(in);
  CHECK(op.stages[1].memory.activation.as_double() == doctest::Approx(3 * layer.op.saved_bytes));
  CHECK(op.stages[1].memory.recompute_units == 3);
  CHECK(op.stages[1].backward_input.recompute ==
        doctest::Approx(3 * layer.op.recompute.flops() / 156e12));
  CHECK(op.stages[1].backward_input.recompute < none.stages[1].forward.seconds() / 2);
}

TEST_CASE("recompute: selective under FlashAttention redoes the norms and activation functions") {
  TransformerModel m = zb_1p5b();  // GeLU, no dropout: M = 0
  m.attention.kind = AttentionKind::Flash;
  GpuSpec gpu = a100(0.5);
  gpu.memory_bandwidth = Bandwidth::bytes_per_second(2e12);
  gpu.efficiency.kind = EfficiencyModel::Kind::Roofline;
  gpu.efficiency.gemm_max = 0.8;
  gpu.efficiency.memory = 1.0;
  ModelCostInputs in = inputs(m, gpu, 8);
  const ModelCosts none = model_costs(in);
  in.recompute.policy = MemoryPolicy::Selective;
  const ModelCosts selective = model_costs(in);
  const double s = 1024, b = 6, h = 2304, f = 4 * h, e = 2;
  // Per layer M_B drops both norm outputs (2 s b h e) and the GeLU output (s b f e); stage 1
  // holds 3 layers.
  CHECK(none.stages[1].memory.activation.as_double() -
            selective.stages[1].memory.activation.as_double() ==
        doctest::Approx(3 * (2 * s * b * h * e + s * b * f * e)));
  // B runs the norms' and the activation's forward kernels again: their HBM bytes, 4 s b h e for
  // the norms and the GeLU's forward traffic, at the bandwidth.
  const ComponentWork layer = transformer_layer_work(m, Sharding{});
  REQUIRE(layer.selective_recompute.gemms.empty());
  CHECK(layer.selective_recompute.memory_bytes() > 4 * s * b * h * e);
  CHECK(selective.stages[1].backward_input.recompute ==
        doctest::Approx(3 * layer.selective_recompute.memory_bytes() / 2e12));
  CHECK(selective.stages[1].forward.total() == none.stages[1].forward.total());
}

TEST_CASE("roofline: overhead plus throughput, bounded by the operands' traffic") {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(1000e12);
  g.memory_bandwidth = Bandwidth::bytes_per_second(2e12);
  g.efficiency.kind = EfficiencyModel::Kind::Roofline;
  g.efficiency.gemm_max = 0.8;
  g.efficiency.gemm_overhead_s = 5e-6;
  g.efficiency.memory = 1.0;
  const GemmWork big{"big", 8192, 8192, 8192};
  CHECK(gemm_seconds(big, g, 2) == doctest::Approx(5e-6 + big.flops() / 800e12));
  CHECK(gemm_efficiency(g.efficiency, 1000e12, big.flops()) ==
        doctest::Approx(big.flops() / (1000e12 * (5e-6 + big.flops() / 800e12))));
  const GemmWork thin{"thin", 65536, 65536, 8};  // 2^34 FLOPs, 8.6 GB of operands
  CHECK(gemm_seconds(thin, g, 2) == doctest::Approx(thin.bytes(2) / 2e12));
  // FP8 operands (1 byte) use the FP8 ceiling when the curve has one, else gemm_max.
  CHECK(gemm_seconds_at(big, g, 2000e12, 1) == doctest::Approx(5e-6 + big.flops() / 1600e12));
  g.efficiency.gemm_max_fp8 = 0.6;
  CHECK(gemm_seconds_at(big, g, 2000e12, 1) == doctest::Approx(5e-6 + big.flops() / 1200e12));
  CHECK(gemm_seconds(big, g, 2) == doctest::Approx(5e-6 + big.flops() / 800e12));
  g.efficiency.gemm_max_fp8 = 0;
  PassWork pass;
  pass.attention_flops = 1e12;
  pass.memory.push_back({"norm", 4e9});
  g.efficiency.attention_forward = 0.5;
  const PassTime t = pass_time(pass, g, 2, false);
  CHECK(t.attention_s == doctest::Approx(1e12 / 500e12));
  CHECK(t.memory_s == doctest::Approx(4e9 / 2e12));
}
