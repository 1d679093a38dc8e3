#pragma once
// Helpers shared by the optimizer tests: generator inputs, the engine's replay with a budget, the
// optimizer's problem built independently of the generator, and tables as steps.

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "schedules/optimizer/problem.h"
#include "tests/engine/engine_test_support.h"
#include "tests/engine/zb_table5_rows.h"

namespace bubblesim::testing {

/// The search's evaluation budget in tests: deterministic, and small enough for the ASan build.
inline constexpr std::int64_t kTestEvaluations = 3000;

inline GeneratorInput input(int p, int m, const StageCost& c, Time comm, double units,
                            const std::string& method = "auto") {
  GeneratorInput in = generator_input(p, m, c);
  in.delay = comm;
  in.params.set("budget_units", units);
  in.params.set("method", method);
  in.params.set("budget_evals", kTestEvaluations);
  return in;
}

/// The engine's fixed-delay replay of `t` with a per-device budget and, for offload copies, a
/// private PCIe link per GPU.
inline SimulationResult replay_budget(const Table& t, const StageCost& c, Time comm, Bytes budget,
                                      std::optional<Bandwidth> link = std::nullopt) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages, c).for_table(1);
  in.network = FixedDelayNetwork{comm};
  in.memory_budget.assign(static_cast<std::size_t>(t.devices), budget);
  in.offload_bandwidth = link;
  return simulate(in);
}

/// The optimizer's problem for `in`, built here independently of the generator, with the limit
/// `units` M_B; with `link`, offload (copies at that bandwidth) and recompute are allowed.
inline optimizer::Problem problem_of(const GeneratorInput& in, double units,
                                     std::optional<Bandwidth> link = std::nullopt) {
  optimizer::Problem pr;
  pr.set_shape(in.devices, in.microbatches, optimizer::PlacementKind::Straight);
  pr.set_uniform_comm(in.delay.ps());
  for (const StageCost& c : in.costs.stages) {
    pr.forward_ps.push_back(c.forward.ps());
    pr.backward_ps.push_back(c.backward_input.ps());
    pr.weight_ps.push_back(c.backward_weight.ps());
    pr.memory.activation_bytes.push_back(c.activation.count());
    pr.memory.weight_grad_bytes.push_back(c.weight_grad.count());
    pr.memory.limit_bytes.push_back(
        static_cast<std::int64_t>(units * c.activation.as_double() + 0.5));
    if (link) {
      pr.memory_ops.recompute_ps.push_back(c.forward.ps());
      pr.memory_ops.stage_input_bytes.push_back(c.stage_input.count());
      pr.memory_ops.d2h_ps.push_back(transfer_time(c.activation, *link).ps());
      pr.memory_ops.h2d_ps.push_back(transfer_time(c.activation, *link).ps());
    }
  }
  pr.memory_ops.allow_offload = pr.memory_ops.allow_recompute = link.has_value();
  return pr;
}

/// A table's device lists as the optimizer's steps.
inline optimizer::Order order_of(const Table& t) {
  auto kind = [](OpKind k) {
    switch (k) {
      case OpKind::Forward:
        return optimizer::StepKind::F;
      case OpKind::Backward:
        return optimizer::StepKind::B;
      case OpKind::Weight:
        return optimizer::StepKind::W;
      case OpKind::Recompute:
        return optimizer::StepKind::R;
      case OpKind::Offload:
        return optimizer::StepKind::O;
      default:
        return optimizer::StepKind::L;
    }
  };
  optimizer::Order order(static_cast<std::size_t>(t.devices));
  for (std::size_t d = 0; d < order.size(); ++d)
    for (const Op& op : t.device_ops[d])
      order[d].push_back({kind(op.kind), op.stage, op.microbatch});
  return order;
}

}  // namespace bubblesim::testing
