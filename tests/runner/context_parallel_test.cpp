// Context parallelism (`parallelism.cp`, docs/parallelism.md): the rank layout, the split of
// every op's work and activations over the cp ranks, the ring attention's exposed K, V steps on
// the topology, the gradient group, and the loader's refusals.
#include <doctest/doctest.h>

#include <string>

#include "scenario_run_support.h"
#include "sim/report/throughput.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

/// A 2-stage pipeline of a GQA model on 8-GPU DGX-H100 nodes (two unless `topology` says), tp 4
/// and `rest` (dp, cp, order), constant efficiency so that every FLOP costs the same.
Scenario cp_scenario(const std::string& rest, std::int64_t microbatches = 8,
                     const std::string& attention = "flash",
                     const std::string& topology = "dgx-h100-2nodes") {
  const std::string yaml = R"(
name: cp
pipeline: {stages: 2, microbatches: )" +
                           std::to_string(microbatches) +
                           R"(}
model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, seq_len: 8192, micro_batch_size: 1,
        vocab: 32000, dtype: bf16, attention: )" +
                           attention +
                           R"(}
cluster:
  gpu: {flops: 989TFLOPS, efficiency: 0.5, memory: 80GiB, memory_bandwidth: 3.35TB/s}
topology: topologies/)" + topology +
                           R"(.yaml
parallelism: {tp: 4, )" + rest +
                           R"(}
schedules: [1f1b]
)";
  return load_scenario_string(yaml, "cp.yaml", source("scenarios"), registry());
}

std::string load_error(const std::string& rest, const std::string& attention = "flash") {
  try {
    cp_scenario(rest, 8, attention);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cp: the ranks go next to tp by default and every cp rank has its own GPU") {
  const Scenario sc = cp_scenario("dp: 1, cp: 2");
  CHECK(sc.parallelism.order == std::vector<std::string>{"tp", "cp", "pp", "dp"});
  REQUIRE(sc.parallelism.gpus.size() == 16);
  // Stage 0: TP ranks gpu 0-3 at cp rank 0, gpu 4-7 at cp rank 1; stage 1 on the second node.
  CHECK(sc.parallelism.rank_index(2, 0, 0, 1, 1) == 5);
  CHECK(sc.parallelism.rank_index(2, 1, 0, 0, 0) == 8);
  CHECK(sc.parallelism.gradient_group() == 2);
}

TEST_CASE("cp 2 halves every op's work and activations and adds the ring's exposed steps") {
  const Scenario one = cp_scenario("dp: 2");
  const Scenario two = cp_scenario("dp: 1, cp: 2");
  const ResolvedScenario r1 = resolve(one), r2 = resolve(two);
  REQUIRE(r1.model_costs);
  REQUIRE(r2.model_costs);
  for (std::size_t s = 0; s < 2; ++s) {
    CAPTURE(s);
    const StageBreakdown& a = r1.model_costs->stages[s];
    const StageBreakdown& b = r2.model_costs->stages[s];
    // At a constant efficiency every FLOP costs the same: s / 2 rows of every GEMM and half of
    // the causal attention pairs per GPU.
    CHECK(b.forward.layers == doctest::Approx(a.forward.layers / 2).epsilon(1e-9));
    CHECK(b.backward_input.layers == doctest::Approx(a.backward_input.layers / 2).epsilon(1e-9));
    CHECK(b.backward_weight.layers == doctest::Approx(a.backward_weight.layers / 2).epsilon(1e-9));
    CHECK(b.memory.activation.as_double() ==
          doctest::Approx(a.memory.activation.as_double() / 2).epsilon(1e-6));
    CHECK(b.p2p.count() == a.p2p.count() / 2);
    CHECK(b.parameters_per_gpu == a.parameters_per_gpu);  // CP does not split parameters
    // Inside a node the K, V steps hide behind the attention blocks in F; B's last dK, dV step
    // home is exposed in every layer.
    CHECK(a.forward.cp_comm == 0.0);
    CHECK(b.forward.cp_comm == 0.0);
    CHECK(b.backward_input.cp_comm > 0.0);
    CHECK(b.cp_ring.steps_forward == (s == 0 ? 4 : 4));
    // K and V of 4096 tokens at 2 KV heads per TP rank, 128 wide, bf16.
    CHECK(b.cp_ring.step_bytes == 2.0 * 4096 * 2 * 128 * 2);
  }
  bool listed = false;
  for (const CollectiveSummary& c : r2.sync.tp_summaries)
    listed = listed || c.name.find("cp ring") != std::string::npos;
  CHECK(listed);
}

TEST_CASE("cp: a ring across nodes leaves F's steps exposed too") {
  const ResolvedScenario in_node = resolve(cp_scenario("dp: 1, cp: 2"));
  const ResolvedScenario across = resolve(cp_scenario("dp: 1, cp: 2, order: [tp, pp, cp, dp]"));
  for (std::size_t s = 0; s < 2; ++s) {
    const StageBreakdown& a = in_node.model_costs->stages[s];
    const StageBreakdown& b = across.model_costs->stages[s];
    CHECK(b.backward_input.cp_comm > a.backward_input.cp_comm);
    CHECK(b.forward.cp_comm >= a.forward.cp_comm);
  }
}

TEST_CASE("cp 2 on twice the GPUs: the same global batch in less time and memory") {
  // dp 2 against cp 2 on the same 16 GPUs: the same 16 sequences per iteration.
  const Scenario dp = cp_scenario("dp: 2", 8);
  const Scenario cp = cp_scenario("dp: 1, cp: 2", 16);
  const ScenarioRun rd = run_scenario(dp, registry());
  const ScenarioRun rc = run_scenario(cp, registry());
  const Metrics& a = run_named(rd, "1f1b").simulation.metrics;
  const Metrics& b = run_named(rc, "1f1b").simulation.metrics;
  REQUIRE(a.makespan > Time::zero());
  REQUIRE(b.makespan > Time::zero());
  // Half the work per microbatch, twice the microbatches: about the same time, the 1F1B warm-up
  // shorter (ops of half the length), the ring's steps and TP's collectives on top.
  CHECK(b.makespan.seconds() < 1.15 * a.makespan.seconds());
  CHECK(b.makespan.seconds() > 0.8 * a.makespan.seconds());
  // 1F1B holds p microbatches on stage 0: half the activations each.
  CHECK(b.memory.peak_activation < a.memory.peak_activation);
  const Throughput ta = throughput(dp, a.makespan.seconds());
  const Throughput tc = throughput(cp, b.makespan.seconds());
  REQUIRE(ta.tokens_per_s_per_gpu);
  REQUIRE(tc.tokens_per_s_per_gpu);
  CHECK(*tc.tokens_per_s_per_gpu ==
        doctest::Approx(*ta.tokens_per_s_per_gpu * a.makespan.seconds() / b.makespan.seconds()));
}

TEST_CASE("cp: what the loader refuses, naming the key and the reason") {
  CHECK(load_error("dp: 1, cp: 2", "standard").find("attention: flash") != std::string::npos);
  CHECK(load_error("dp: 1, cp: 3").find("divisible by 6") != std::string::npos);
  CHECK(load_error("dp: 1, cp: 2, order: [tp, pp, dp]").find("order must place cp") !=
        std::string::npos);
  CHECK(load_error("dp: 2, order: [tp, cp, pp, dp]").find("needs parallelism.cp > 1") !=
        std::string::npos);
  CHECK(load_error("dp: 1, cp: 4").find("needs 32") != std::string::npos);  // 2 x 4 x 4 GPUs
  const std::string moe = R"(
name: cp-moe
pipeline: {stages: 2, microbatches: 8}
model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000, moe: {experts: 8, top_k: 2}}
cluster: {gpu: {flops: 312TFLOPS, efficiency: 0.5, memory: 80GiB}}
topology: topologies/dgx-h100-2nodes.yaml
parallelism: {cp: 2}
schedules: [1f1b]
)";
  try {
    load_scenario_string(moe, "moe.yaml", source("scenarios"), registry());
    FAIL("cp with MoE layers must be refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("MoE layers (model.moe) is not modelled") !=
          std::string::npos);
  }
}

TEST_CASE("zero 3: parameters sharded dp x cp ways, its per-op collectives behind the compute") {
  auto costs = [](const std::string& rest) {
    const ResolvedScenario r = resolve(cp_scenario(rest, 8, "flash", "dgx-h100-4nodes"));
    REQUIRE(r.model_costs);
    return r.model_costs->stages[0];
  };
  // Megatron-FSDP (engine megatron at zero 3) gathers and reduce-scatters in every microbatch's
  // ops also under a pipeline.
  const std::string fsdp = "}\ndata_parallel: {engine: megatron";
  const StageBreakdown none = costs("dp: 2, cp: 2");
  const StageBreakdown overlapped = costs("dp: 2, cp: 2, zero: 3" + fsdp);
  const StageBreakdown exposed = costs("dp: 2, cp: 2, zero: 3, zero_overlap: false" + fsdp);
  // 18 bytes per parameter over dp x cp = 4 GPUs (docs/models.md).
  CHECK(overlapped.memory.static_memory.as_double() ==
        doctest::Approx(none.memory.static_memory.as_double() / 4).epsilon(1e-6));
  // Gathers before F and B, reduce-scatters after W; layer by layer they hide behind the
  // compute except the first layer's, whole they are all exposed.
  for (const TimeParts* p :
       {&overlapped.forward, &overlapped.backward_input, &overlapped.backward_weight}) {
    CHECK(p->zero_comm > 0.0);
  }
  CHECK(overlapped.forward.zero_comm < exposed.forward.zero_comm);
  CHECK(overlapped.backward_weight.zero_comm < exposed.backward_weight.zero_comm);
  CHECK(none.forward.zero_comm == 0.0);
}

TEST_CASE("tp_comm_overlap: a layer pays what its GEMMs do not hide, plus the first chunk") {
  auto costs = [](const std::string& rest) {
    const ResolvedScenario r = resolve(cp_scenario(rest));
    REQUIRE(r.model_costs);
    return r.model_costs->stages[0];
  };
  const StageBreakdown plain = costs("dp: 2, sp: true");
  const StageBreakdown overlapped = costs("dp: 2, sp: true, tp_comm_overlap: true");
  REQUIRE(plain.forward.tp_comm > 0.0);
  // 4 layers, every collective within its GEMMs here: each pays 1/t of it (t = 4); stage 0's
  // embedding collectives stay whole.
  CHECK(overlapped.forward.tp_comm < plain.forward.tp_comm);
  CHECK(overlapped.forward.tp_comm > plain.forward.tp_comm / 4 - 1e-12);
  CHECK(overlapped.backward_input.tp_comm < plain.backward_input.tp_comm);
  CHECK(overlapped.forward.layers == plain.forward.layers);
  CHECK(load_error("dp: 2, tp_comm_overlap: true").find("needs sp: true") != std::string::npos);
}

namespace {

/// The stage-0 costs of a 2-stage tp 4 sp pipeline on H100 presets (132 SMs) with the TP
/// collectives overlapped (unless `overlapped` is false) and `overlap` as given ("" for none).
std::string tp_overlap_yaml(const std::string& overlap, const std::string& gpu,
                            bool overlapped = true) {
  return R"(
name: tp-sms
pipeline: {stages: 2, microbatches: 4}
model: {layers: 4, hidden: 4096, heads: 32, kv_heads: 8, seq_len: 4096, micro_batch_size: 1,
        vocab: 32000, dtype: bf16, attention: flash}
cluster: {gpu: )" +
         gpu + R"(}
topology: topologies/dgx-h100-2nodes.yaml
parallelism: {tp: 4, sp: true, tp_comm_overlap: )" +
         (overlapped ? "true" : "false") + "}\n" +
         (overlap.empty() ? "" : "overlap: " + overlap + "\n") + "schedules: [1f1b]\n";
}

StageBreakdown tp_overlap_costs(const std::string& overlap) {
  const ResolvedScenario r = resolve(load_scenario_string(
      tp_overlap_yaml(overlap, "{preset: h100-sxm}"), "tp.yaml", source("scenarios"), registry()));
  REQUIRE(r.model_costs);
  return r.model_costs->stages[0];
}

std::string tp_overlap_error(const std::string& overlap, const std::string& gpu,
                             bool overlapped = true) {
  try {
    load_scenario_string(tp_overlap_yaml(overlap, gpu, overlapped), "tp.yaml", source("scenarios"),
                         registry());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("overlap.tp_comm_sms: the GEMMs beside the reserving kernels run on the other SMs") {
  const StageBreakdown none = tp_overlap_costs("{tp_comm_sms: 0}");
  const StageBreakdown te = tp_overlap_costs("");  // Transformer Engine's default, 16 SMs
  const StageBreakdown sixteen = tp_overlap_costs("{tp_comm_sms: 16}");
  const StageBreakdown more = tp_overlap_costs("{tp_comm_sms: 32}");
  CHECK(te.forward.tp_comm == sixteen.forward.tp_comm);
  CHECK(te.backward_input.tp_comm == sixteen.backward_input.tp_comm);
  for (auto part : {&StageBreakdown::forward, &StageBreakdown::backward_input}) {
    CHECK((none.*part).tp_comm < (sixteen.*part).tp_comm);
    // The same GEMMs at 1 / (1 - n / 132): the extra time grows as (n / 132) / (1 - n / 132).
    const double extra16 = (sixteen.*part).tp_comm - (none.*part).tp_comm;
    const double extra32 = (more.*part).tp_comm - (none.*part).tp_comm;
    CHECK(extra32 / extra16 == doctest::Approx((32.0 / 100.0) / (16.0 / 116.0)).epsilon(1e-9));
  }
  // W's GEMMs run beside no reserving kernel; the layers' compute itself is unchanged.
  CHECK(none.backward_weight.tp_comm == sixteen.backward_weight.tp_comm);
  CHECK(none.forward.layers == sixteen.forward.layers);
  // Refused: without the overlap, without an SM count, and leaving the GEMMs no SM.
  CHECK(tp_overlap_error("{tp_comm_sms: 16}", "{preset: h100-sxm}", false)
            .find("needs parallelism.tp_comm_overlap") != std::string::npos);
  CHECK(tp_overlap_error("{tp_comm_sms: 16}",
                         "{flops: 989TFLOPS, memory: 80GiB, memory_bandwidth: 3.35TB/s}")
            .find("SM count") != std::string::npos);
  CHECK(tp_overlap_error("{tp_comm_sms: 132}", "{preset: h100-sxm}").find("allowed: 0 to 131") !=
        std::string::npos);
}

TEST_CASE("overlap.comm_sm_fraction: ZeRO-3's hidden per-layer gathers slow the compute beside") {
  // One stage of 8 layers, FSDP2 over 8 GPUs of a node: each op gathers its units (embedding,
  // layers, head) one after another, the first exposed, each later one behind the unit before.
  // No end-of-step gradient sync runs (FSDP reduce-scatters in every backward): only FSDP's
  // collectives can hide under compute here. The per-unit arithmetic is sharded_exposure's
  // (tests/costmodel/sharded_collectives_test.cpp).
  auto costs = [](const std::string& fraction, bool overlap = true) {
    const ResolvedScenario r = resolve(load_scenario_string(
        "name: zero-sm\n"
        "pipeline: {stages: 1, microbatches: 2}\n"
        "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 4096, vocab: 32000}\n"
        "cluster: {gpu: {preset: h100-sxm}}\n"
        "topology: topologies/dgx-h100.yaml\n"
        "parallelism: {dp: 8, zero: 3, zero_overlap: " +
            std::string(overlap ? "true" : "false") + "}\n" + fraction + "schedules: [1f1b]\n",
        "zero.yaml", source("scenarios"), registry()));
    REQUIRE(r.model_costs);
    return r;
  };
  const ResolvedScenario none_r = costs("");
  const ResolvedScenario sm_r = costs("overlap: {comm_sm_fraction: 0.2}\n");
  const StageBreakdown& none = none_r.model_costs->stages[0];
  const StageBreakdown& sm = sm_r.model_costs->stages[0];
  // The gathers of one F: all 10 units' on an idle node (the collectives table's line).
  double gathers = 0;
  for (const CollectiveSummary& c : none_r.sync.tp_summaries)
    if (c.name == "dp all-gather stage 0 (per F op)") gathers = c.simulated.seconds();
  REQUIRE(gathers > 0);
  const TimeParts& a = none.forward;
  const TimeParts& b = sm.forward;
  CHECK(a.layers == b.layers);  // the compute itself is unchanged
  // F pays the first unit's gather g0 and what each later gather g_k exceeds the compute c of
  // the unit before: a = g0 + sum max(0, g_k - c). The hidden parts, sum min(g_k, c), are then
  // the gathers less a; each shares its time with compute at 0.2 of the SMs, 0.2 / 0.8 longer.
  CHECK(b.zero_comm - a.zero_comm == doctest::Approx(0.25 * (gathers - a.zero_comm)).epsilon(1e-6));
  CHECK(gathers - a.zero_comm > 0);
  // Without zero_overlap nothing hides, and without a collective to hide it is refused.
  try {
    costs("overlap: {comm_sm_fraction: 0.2}\n", false);
    FAIL("comm_sm_fraction without a hidden collective must be refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("zero_overlap") != std::string::npos);
  }
}

TEST_CASE("a job past 2^31 GPUs is refused by name, not overflowed") {
  // 2 stages x dp 65536 x tp 32 x cp 1024 = 2^32 GPUs, within every key's own limits.
  const std::string yaml = R"(
name: huge
pipeline: {stages: 2, microbatches: 8}
model: {layers: 8, hidden: 4096, heads: 32, seq_len: 8192, vocab: 32000}
cluster: {gpu: {flops: 989TFLOPS, efficiency: 0.5, memory: 80GiB}}
topology: topologies/dgx-h100-2nodes.yaml
parallelism: {dp: 65536, tp: 32, cp: 1024}
variability: {cv: 0.01, per: device, slowest_of: group}
schedules: [1f1b]
)";
  try {
    load_scenario_string(yaml, "huge.yaml", source("scenarios"), registry());
    FAIL("a 2^32-GPU job must be refused");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs 4294967296") != std::string::npos);
    CHECK(what.find("2147483648 (tp x dp x cp) is more than 2^31 - 1") != std::string::npos);
  }
}
