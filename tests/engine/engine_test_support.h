#pragma once
// Helpers shared by the engine tests: uniform costs, generated tables and replays.

#include <string>

#include "schedules/builtin_generators.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"

namespace bubblesim::testing {

inline StageCost stage_cost_ms(double f, double b, double w, double act_mib = 0,
                               double wgrad_mib = 0) {
  StageCost c;
  c.forward = Time::from_seconds(f * 1e-3);
  c.backward_input = Time::from_seconds(b * 1e-3);
  c.backward_weight = Time::from_seconds(w * 1e-3);
  c.activation = Bytes(static_cast<std::int64_t>(act_mib * 1024 * 1024));
  c.weight_grad = Bytes(static_cast<std::int64_t>(wgrad_mib * 1024 * 1024));
  return c;
}

/// The built-in generators, built once per test binary.
inline const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

/// p stages of cost c, m microbatches, with `params`.
inline GeneratorInput generator_input(int p, int m, const StageCost& c, ParamValues params = {}) {
  GeneratorInput in;
  in.devices = p;
  in.microbatches = m;
  in.costs = CostProfile::uniform(p, c);
  in.params = std::move(params);
  return in;
}

inline Table generate(const std::string& name, int p, int m, const StageCost& c,
                      ParamValues params = {}) {
  return registry().find(name)->generate(generator_input(p, m, c, std::move(params)));
}

/// The keys of the blocking sends and the host gaps (communication.p2p, p2p_sync_gap) as a
/// scenario hands them to the engine (EngineInput::behaviours).
inline void set_p2p(EngineInput& in, const std::string& mode, Time sync_gap = Time::zero()) {
  in.behaviours.settings.set("communication.p2p", mode);
  in.behaviours.settings.set("communication.p2p_sync_gap", sync_gap);
}

inline SimulationResult replay(const Table& t, const StageCost& c,
                               NetworkSpec network = NoCostNetwork{}) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages / t.chunks, c).for_table(t.chunks);
  in.network = std::move(network);
  return simulate(in);
}

}  // namespace bubblesim::testing
