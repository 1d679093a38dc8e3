// The PyTorch framework presets on a real step (docs/models.md, "Frameworks"): Llama-3-8B with
// FSDP over one 8-GPU H100 node, eager against torch.compile. The two differ only by the fusions
// torch.compile makes (RoPE, SwiGLU, the residual add into the norm, the loss), so their layer
// times differ by exactly those kernels' HBM bytes.
#include <doctest/doctest.h>

#include <string>

#include "scenario_run_support.h"
#include "sim/runner/resolve.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

Scenario fsdp_llama(const std::string& framework, const std::string& extra = "", int zero = 3) {
  const std::string yaml = R"(
name: llama3-8b-fsdp
pipeline: {stages: 1, microbatches: 2}
model: {preset: llama3-8b, framework: )" +
                           framework +
                           R"(, seq_len: 8192, micro_batch_size: 1}
cluster: {gpu: {preset: h100-sxm}}
topology: {builder: single-node, gpus: 8, nvlink: {bandwidth: 450GB/s, latency: 2us},
           pcie: {bandwidth: 64GB/s, latency: 2us}}
parallelism: {dp: 8, zero: )" +
                           std::to_string(zero) + R"(}
memory: {budget: 1TB}
schedules: [1f1b]
)" + extra;
  return load_scenario_string(yaml, "fsdp.yaml", source("scenarios"), registry());
}

}  // namespace

TEST_CASE("pytorch-eager and pytorch-compile: an FSDP Llama-3-8B step differs by the fusions") {
  const Scenario eager = fsdp_llama("pytorch-eager");
  const Scenario compiled = fsdp_llama("pytorch-compile");
  const ResolvedScenario re = resolve(eager), rc = resolve(compiled);
  REQUIRE(re.model_costs);
  REQUIRE(rc.model_costs);
  // One GPU's layer: T = 8192 tokens, h 4096, f 14336, 32 query and 8 KV heads of 128, bf16.
  const double T = 8192, h = 4096, f = 14336, e = 2, qk = (32 + 8) * 128;
  // F, per layer, eager minus compiled, in HBM bytes:
  //   RoPE: fp32 casts around a complex multiply, 16 + 2e per Q and K element, against one fused
  //         kernel's 2e: 16 T qk;
  //   SwiGLU: silu then multiply, 5e per element of T x f, against the fused kernel's 3e: 2e T f;
  //   the residual add and the MLP norm in one kernel: H = T h e fewer.
  const double forward_bytes = 16 * T * qk + 2 * e * T * f + T * h * e;
  // B: RoPE the same 16 T qk; SwiGLU's autograd 9e against the fused backward's 5e: 4e T f; the
  // norm's gradient and the sum at the branch point in one kernel: 2H fewer.
  const double backward_bytes = 16 * T * qk + 4 * e * T * f + 2 * T * h * e;
  const double hbm = 3.35e12 * 0.8;  // h100-sxm: 3.35 TB/s at the curve's memory efficiency
  const StageBreakdown& a = re.model_costs->stages[0];
  const StageBreakdown& b = rc.model_costs->stages[0];
  CHECK(a.layers == 32);
  CHECK(a.forward.layers - b.forward.layers ==
        doctest::Approx(32 * forward_bytes / hbm).epsilon(1e-6));
  CHECK(a.backward_input.layers - b.backward_input.layers ==
        doctest::Approx(32 * backward_bytes / hbm).epsilon(1e-6));
  CHECK(a.backward_weight.layers == doctest::Approx(b.backward_weight.layers));
  // The loss: the eager fp32 log-softmax against the compiled loss that writes no fp32 copy:
  // (e + 4) + 32 against 3e bytes per logit in F, 8 + (4 + e) against 2e in B.
  const double logits = T * 128256;
  CHECK(a.forward.lm_head - b.forward.lm_head ==
        doctest::Approx((38.0 - 6.0) * logits / hbm).epsilon(1e-6));
  CHECK(a.backward_input.lm_head - b.backward_input.lm_head ==
        doctest::Approx((14.0 - 4.0) * logits / hbm).epsilon(1e-6));
  // Eager autograd keeps silu's output for the multiply's backward: one T x f tensor a layer;
  // the eager loss keeps the fp32 softmax (4 bytes a logit), the compiled one 2.
  CHECK(a.memory.activation.as_double() - b.memory.activation.as_double() ==
        doctest::Approx(32 * T * f * e + 2.0 * logits).epsilon(1e-9));
  // Everything else is the same (the same SDPA kernel, the same repeated K and V, the same GEMMs),
  // and the step shows it.
  const ScenarioRun se = run_scenario(eager, registry()), sc = run_scenario(compiled, registry());
  const double te = run_named(se, "1f1b").simulation.metrics.iteration.iteration_time.seconds();
  const double tc = run_named(sc, "1f1b").simulation.metrics.iteration.iteration_time.seconds();
  CHECK(te > tc);
}

TEST_CASE("iteration.checkpoint: the recipe's save interval amortised into every iteration") {
  const Scenario plain = fsdp_llama("pytorch-eager");
  const Scenario saving = fsdp_llama(
      "pytorch-eager", "iteration: {checkpoint: {interval: 100, write_bandwidth: 2GB/s}}\n");
  const ResolvedScenario r = resolve(saving);
  REQUIRE(r.checkpoint.size() == 1);
  // Each of the 8 FSDP ranks writes 1/8 of the unique state: Llama-3-8B's parameters at 2 bytes
  // plus Adam's 12, at 2 GB/s, once every 100 iterations.
  const double params = r.model_costs->stages[0].parameters_per_gpu;
  CHECK(params == doctest::Approx(8.03e9).epsilon(0.001));
  const double expected = params * (2 + 12) / 8 / 2e9 / 100;
  CHECK(r.checkpoint[0].seconds() == doctest::Approx(expected));
  const ScenarioRun a = run_scenario(plain, registry()), b = run_scenario(saving, registry());
  const double ta = run_named(a, "1f1b").simulation.metrics.iteration.iteration_time.seconds();
  const double tb = run_named(b, "1f1b").simulation.metrics.iteration.iteration_time.seconds();
  CHECK(tb - ta == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("the framework presets' data-parallel engines: FSDP when sharded, DDP at zero 0") {
  // torchtitan shards with fully_shard (FSDP2), Composer with FSDP1, the HF Trainer with
  // DeepSpeed ZeRO; unsharded, torchtitan's parallelize_llama calls apply_ddp and Composer wraps
  // DDP, so zero 0 keeps the ddp engine instead of refusing the scenario.
  const auto engine = [](const Scenario& sc) {
    return sc.parallelism.data_parallel.semantics.engine;
  };
  const Scenario titan = fsdp_llama("pytorch-eager");
  CHECK(engine(titan) == DataParallelEngine::Fsdp2);
  CHECK(titan.parallelism.data_parallel.engine_from == "model.framework pytorch-eager");
  CHECK(engine(fsdp_llama("pytorch-compile")) == DataParallelEngine::Fsdp2);
  CHECK(engine(fsdp_llama("llm-foundry")) == DataParallelEngine::Fsdp);
  CHECK(engine(fsdp_llama("deepspeed-hf")) == DataParallelEngine::DeepSpeed);
  CHECK(engine(fsdp_llama("deepspeed-hf", "", 1)) == DataParallelEngine::DeepSpeed);
  const Scenario replicated = fsdp_llama("pytorch-eager", "", 0);
  CHECK(engine(replicated) == DataParallelEngine::Ddp);
  CHECK(replicated.parallelism.data_parallel.engine_from == "parallelism.zero");
  CHECK(engine(fsdp_llama("llm-foundry", "", 0)) == DataParallelEngine::Ddp);
}
