// The optimizer's plan_costs: median (docs/optimizer.md, "Planning from the median stage"): the
// zero-bubble runtime plans its ZB-1p/ZB-2p with the upper median over stages of the profiled F,
// B, W and M_W = M_B / 2, and runs that plan on stages whose costs differ. The table it gives is
// the one the default planning gives on those uniform costs, and differs from the table planned
// with each stage's own costs.
#include <doctest/doctest.h>

#include "optimizer_test_support.h"
#include "tests/engine/engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

/// The zero-bubble 1.5B model's Table 9 stage (the median) with a lighter first stage (the
/// embedding instead of a layer) and a last stage with the LM head, as in the paper's layout.
std::vector<StageCost> layered_costs(int p) {
  const Row row = read_rows().front();
  const StageCost median = row_cost(row);
  std::vector<StageCost> costs(static_cast<std::size_t>(p), median);
  auto scale = [](StageCost c, double f) {
    c.forward = Time::from_seconds(c.forward.seconds() * f);
    c.backward_input = Time::from_seconds(c.backward_input.seconds() * f);
    c.backward_weight = Time::from_seconds(c.backward_weight.seconds() * f);
    c.activation = Bytes(static_cast<std::int64_t>(c.activation.as_double() * f));
    c.weight_grad = Bytes(static_cast<std::int64_t>(c.weight_grad.as_double() * f));
    return c;
  };
  costs.front() = scale(median, 0.67);
  costs.back() = scale(median, 1.12);
  return costs;
}

GeneratorInput layered_input(int p, int m, const std::string& plan) {
  GeneratorInput in = input(p, m, row_cost(read_rows().front()), Time::from_seconds(0.6e-3), 8.0);
  in.costs.stages = layered_costs(p);
  if (!plan.empty()) in.params.set("plan_costs", plan);
  return in;
}

}  // namespace

TEST_CASE("optimized: plan_costs median plans the upper median stage with M_W = M_B / 2") {
  const int p = 8, m = 24;
  const Table median_plan = registry().find("optimized")->generate(layered_input(p, m, "median"));
  // The same search on uniform costs: the upper median (element p / 2 of the sorted stages, here
  // the unscaled Table 9 stage, since one stage is lighter and one heavier) with M_W = M_B / 2.
  StageCost uniform = row_cost(read_rows().front());
  uniform.weight_grad = Bytes(uniform.activation.count() / 2);
  GeneratorInput in = input(p, m, uniform, Time::from_seconds(0.6e-3), 8.0);
  const Table uniform_plan = registry().find("optimized")->generate(in);
  CHECK(median_plan.device_ops == uniform_plan.device_ops);

  const Table own_plan = registry().find("optimized")->generate(layered_input(p, m, "stages"));
  CHECK(own_plan.device_ops != median_plan.device_ops);
  // stages is the default.
  CHECK(registry().find("optimized")->generate(layered_input(p, m, "")).device_ops ==
        own_plan.device_ops);
}

TEST_CASE("optimized: the median plan's formula says so") {
  const Formula f = registry().find("optimized")->formula(layered_input(8, 24, "median"));
  CHECK(f.note.find("planned from the median stage's costs (plan_costs: median)") !=
        std::string::npos);
  const Formula g = registry().find("optimized")->formula(layered_input(8, 24, "stages"));
  CHECK(g.note.find("plan_costs") == std::string::npos);
}

TEST_CASE("Problem::plan_with_median_stage: upper median per field, free boundaries stay free") {
  optimizer::Problem pr;
  pr.set_shape(2, 4, optimizer::PlacementKind::V);  // stages 0,1,2,3 on devices 0,1,1,0
  pr.forward_ps = {1, 4, 2, 3};
  pr.backward_ps = {5, 5, 9, 1};
  pr.weight_ps = {7, 7, 7, 7};
  pr.memory_ops.recompute_ps = {1, 2, 3, 4};
  pr.memory.activation_bytes = {10, 40, 20, 30};
  pr.memory.weight_grad_bytes = {9, 9, 9, 9};
  pr.memory_ops.stage_input_bytes = {1, 1, 2, 2};
  pr.comm.forward_ps = {6, 0, 2};  // boundary 1 (stages 1 -> 2) is inside device 1
  pr.comm.backward_ps = {8, 0, 4};
  pr.plan_with_median_stage();
  CHECK(pr.forward_ps == std::vector<std::int64_t>{3, 3, 3, 3});
  CHECK(pr.backward_ps == std::vector<std::int64_t>{5, 5, 5, 5});
  CHECK(pr.memory_ops.recompute_ps == std::vector<std::int64_t>{3, 3, 3, 3});
  CHECK(pr.memory.activation_bytes == std::vector<std::int64_t>{30, 30, 30, 30});
  CHECK(pr.memory.weight_grad_bytes == std::vector<std::int64_t>{15, 15, 15, 15});
  CHECK(pr.memory_ops.stage_input_bytes == std::vector<std::int64_t>{2, 2, 2, 2});
  CHECK(pr.comm.forward_ps == std::vector<std::int64_t>{6, 0, 6});
  CHECK(pr.comm.backward_ps == std::vector<std::int64_t>{8, 0, 8});
}
