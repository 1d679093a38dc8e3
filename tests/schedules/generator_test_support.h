#pragma once
// Helpers shared by the generator tests: the built-in registry and inputs with uniform stage costs
// (T_F = T_B = T_W = 1 ns unless a test needs others).

#include "schedules/builtin_generators.h"
#include "schedules/registry.h"

namespace bubblesim::testing {

inline const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

inline StageCost unit_cost() {
  StageCost c;
  c.forward = Time::from_ps(1000);
  c.backward_input = Time::from_ps(1000);
  c.backward_weight = Time::from_ps(1000);
  return c;
}

inline GeneratorInput input(int p, int m, ParamValues params = {},
                            const StageCost& cost = unit_cost()) {
  GeneratorInput in;
  in.devices = p;
  in.microbatches = m;
  in.params = std::move(params);
  in.costs = CostProfile::uniform(p, cost);
  return in;
}

}  // namespace bubblesim::testing
