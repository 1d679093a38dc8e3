#pragma once
// Engine: replays one schedule table as a discrete-event simulation. One instance per run; no
// globals. Each device has a compute stream and D2H / H2D copy streams; a stream runs its ops in
// table order, one at a time, each as soon as its dependencies have arrived. Cross-device
// dependencies become delays or network flows according to the NetworkModel. Events are keyed
// by (time, priority, sequence), so the same input always gives the same result.

#include <memory>
#include <vector>

#include "sim/engine/duration_model.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/observer.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

class Engine {
 public:
  explicit Engine(EngineInput input);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Observers must outlive run(). They are called in the order added.
  void add_observer(EngineObserver* observer);
  /// Runs to completion, deadlock or the end of the table. Callable again: every run is a fresh
  /// replay of the same op graph, built on the first run.
  SimulationResult run();
  /// Runs with other durations (a Monte Carlo sample, docs/variability.md), reusing the op graph;
  /// they replace EngineInput::durations for this run and later ones. Null: the stage costs.
  SimulationResult run(std::shared_ptr<const DurationModel> durations);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Convenience: replay with no observers.
SimulationResult simulate(EngineInput input);

}  // namespace bubblesim
