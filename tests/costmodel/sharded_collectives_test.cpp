// ZeRO 2/3's per-microbatch collectives unit by unit (sim/costmodel/sharded_collectives.h) and
// the engines' semantics table (sim/costmodel/data_parallel_engine.h), with the arithmetic
// written out.
#include "sim/costmodel/sharded_collectives.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/costmodel/data_parallel_engine.h"

using namespace bubblesim;

namespace {

/// Three units of 1 s of F compute and 2 s of B compute each; every unit's gather takes `g`,
/// its reduce-scatter `r` seconds (the time function ignores the sizes).
ShardedExposure three_units(double g, double r, ShardedSchedule s) {
  const std::vector<ShardUnit> units(3, ShardUnit{100, 0, 1.0, 2.0});
  return sharded_exposure(units, s, [&](double, double) { return UnitComm{g, r, 0.0}; });
}

}  // namespace

TEST_CASE("sharded_exposure: the first gather waits, later ones hide behind the unit before") {
  const ShardedSchedule fsdp{true, true, true, true, 1, 0.0};
  // Hidden: F = g = 0.5. B runs u2, u1, u0: during u2 the gather of u1 (0.5 < 2); during u1 the
  // gather of u0 and u2's reduce-scatter (0.5 + 0.4 < 2); during u0 u1's (0.4); then u0's
  // reduce-scatter waits: 0.4. The split: gathers 2 x 0.5 = 1, reduce-scatters 3 x 0.4 = 1.2.
  ShardedExposure e = three_units(0.5, 0.4, fsdp);
  CHECK(e.forward == doctest::Approx(0.5));
  CHECK(e.backward_input + e.backward_weight == doctest::Approx(0.4));
  CHECK(e.backward_input == doctest::Approx(0.4 * 1.0 / 2.2));
  // Longer than the compute: F = 1.5 + 2 x (1.5 - 1) = 2.5; B: during u2 1.5 (hidden), during
  // u1 1.5 + 1.2 = 2.7 (0.7 exposed), during u0 1.2 (hidden), then 1.2: 1.9.
  e = three_units(1.5, 1.2, fsdp);
  CHECK(e.forward == doctest::Approx(2.5));
  CHECK(e.backward_input + e.backward_weight == doctest::Approx(1.9));
  // Not prefetched: one collective of the whole stage per op (the time function's g and r).
  ShardedSchedule whole = fsdp;
  whole.prefetch = false;
  e = three_units(1.5, 1.2, whole);
  CHECK(e.forward == doctest::Approx(1.5));
  CHECK(e.backward_input == doctest::Approx(1.5));
  CHECK(e.backward_weight == doctest::Approx(1.2));
  // The SMs of hidden collectives: each hidden min(comm, compute) costs f / (1 - f) more.
  ShardedSchedule sm = fsdp;
  sm.sm_fraction = 0.2;
  e = three_units(0.5, 0.4, sm);
  CHECK(e.forward == doctest::Approx(0.5 + 2 * 0.5 * 0.25));
  CHECK(e.backward_input + e.backward_weight == doctest::Approx(0.4 + (0.5 + 0.9 + 0.4) * 0.25));
}

TEST_CASE("sharded_exposure: DeepSpeed's reduce buckets carry several units' gradients") {
  // ZeRO-2: no gathers; one reduce-scatter per 2 units: after u1 (u2 and u1's gradients, timed
  // for 200 parameters: 2 x 0.4) during u0, then u0's alone at the end.
  const std::vector<ShardUnit> units(3, ShardUnit{100, 0, 1.0, 0.5});
  const ShardedSchedule ds{false, false, true, true, 2, 0.0};
  const ShardedExposure e = sharded_exposure(units, ds, [](double params, double) {
    return UnitComm{0, 0.4 * params / 100, 0};
  });
  CHECK(e.forward == 0.0);
  // During u0 (0.5 s) the 0.8 s reduce-scatter: 0.3 exposed; then u0's 0.4.
  CHECK(e.backward_weight == doctest::Approx(0.3 + 0.4));
  CHECK(e.backward_input == 0.0);
}

TEST_CASE("engines: what each runs at each ZeRO level, from its code") {
  auto sem = [](DataParallelEngine e, int zero, int stages = 1) {
    DataParallelChoices c;
    c.engine = e;
    c.zero = zero;
    c.stages = stages;
    return data_parallel_semantics(c);
  };
  // DDP: an all-reduce during the last backward, fp32 gradients, 1 MiB last bucket.
  DataParallelSemantics s = sem(DataParallelEngine::Ddp, 0);
  CHECK(s.end.runs);
  CHECK_FALSE(s.end.reduce_scatter);
  CHECK(s.end.last_bucket_bytes == 1 << 20);
  CHECK(s.reduce_bytes == 4);
  CHECK(default_bucket_bytes(s, 8) == 25 << 20);
  // FSDP2: zero 3 gathers before F and B and reduce-scatters in every microbatch, no end sync;
  // under a pipeline one gather behind the fill and the reduce-scatter after the last backward.
  s = sem(DataParallelEngine::Fsdp2, 3);
  CHECK(s.per_microbatch.gather_forward);
  CHECK(s.per_microbatch.gather_backward);
  CHECK(s.per_microbatch.reduce_scatter);
  CHECK_FALSE(s.end.runs);
  s = sem(DataParallelEngine::Fsdp2, 3, 4);
  CHECK_FALSE(s.per_microbatch.gather_forward);
  CHECK(s.end.runs);
  CHECK(s.end.reduce_scatter);
  CHECK(s.end.readiness == BucketReadiness::AfterBackward);
  CHECK(s.gather == ParameterGather::BehindFill);
  CHECK(s.unsharded_bytes == 2 + 4);
  // FSDP2 zero 2 (reshard_after_forward false): no gather before B.
  s = sem(DataParallelEngine::Fsdp2, 2);
  CHECK_FALSE(s.per_microbatch.gather_backward);
  // Megatron: distributed optimizer reduce-scatters at the end and gathers after the step
  // (--overlap-param-gather off) or behind the next forward; buckets of max(40M, 1M x dp)
  // parameters.
  s = sem(DataParallelEngine::Megatron, 1);
  CHECK(s.end.reduce_scatter);
  CHECK(s.end.bucket_first_stage_only);
  CHECK(s.gather == ParameterGather::AfterStep);
  DataParallelChoices overlapped;
  overlapped.engine = DataParallelEngine::Megatron;
  overlapped.zero = 1;
  overlapped.overlap_param_gather = true;
  CHECK(data_parallel_semantics(overlapped).gather == ParameterGather::BehindForward);
  CHECK(megatron_bucket_parameters(8) == 40'000'000);
  CHECK(megatron_bucket_parameters(512) == 512'000'000);
  CHECK(default_bucket_bytes(s, 512) == 512'000'000LL * 4);
  // DeepSpeed: bf16 communication, overlap_comm off below stage 3, 5e8-element buckets.
  s = sem(DataParallelEngine::DeepSpeed, 2);
  CHECK(s.reduce_bytes == 2);
  CHECK_FALSE(s.prefetch);
  CHECK(s.gather == ParameterGather::AfterStep);
  CHECK(default_bucket_bytes(s, 8) == 1'000'000'000LL);
  s = sem(DataParallelEngine::DeepSpeed, 1);
  CHECK(s.end.readiness == BucketReadiness::AfterCompute);
  CHECK(sem(DataParallelEngine::DeepSpeed, 3).prefetch);
  // Defaults from the ZeRO level, and what no engine runs.
  CHECK(default_data_parallel_engine(0) == DataParallelEngine::Ddp);
  CHECK(default_data_parallel_engine(1) == DataParallelEngine::Megatron);
  CHECK(default_data_parallel_engine(3) == DataParallelEngine::Fsdp2);
  CHECK_THROWS_AS(sem(DataParallelEngine::Ddp, 1), std::invalid_argument);
  CHECK_THROWS_AS(sem(DataParallelEngine::Fsdp, 3, 2), std::invalid_argument);
  CHECK_THROWS_AS(sem(DataParallelEngine::DeepSpeed, 3, 2), std::invalid_argument);
}
