#pragma once
// Generator: a pure function from pipeline shape, parameters and costs to a schedule table, with
// its closed-form bubble and activation peak where one is published. Generators never see the
// engine. Built-ins and plugins register them through the same Registrar.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/order_stream.h"
#include "schedules/parameter.h"
#include "schedules/replay_settings.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

/// Everything a generator may use. `costs` are per pipeline stage of the p-way split.
struct GeneratorInput {
  std::int32_t devices = 0;       // p
  std::int32_t microbatches = 0;  // m
  ParamValues params;
  CostProfile costs;
  Time delay;  // communication.delay: the fixed stage-to-stage delay (zero with a topology)
  std::vector<Bytes> memory_budget;  // memory.budget per device (p values); empty = no budget
  /// memory.release: when the replay frees activation memory (schedules/activation_memory.h),
  /// for a generator that plans under the budget.
  ReleaseConvention release = ReleaseConvention::Split;
  std::string base_dir;  // the scenario file's folder, for relative paths in params
  /// Per device: bandwidth of the route to and from its host memory (the offload copies), or
  /// `memory.offload.bandwidth` under fixed-delay; empty when no host is reachable.
  std::vector<Bandwidth> offload_d2h, offload_h2d;
  /// With a topology: the bottleneck bandwidth and the latency of the route between neighbouring
  /// devices (what a stage-to-stage transfer of straight and V placements pays, without
  /// contention): 2p entries, index 2a for the route from device a to a + 1 and 2a + 1 for the
  /// one to a - 1 (zero where there is no neighbour; p^2 entries were 32 GiB at p = 65536);
  /// empty under fixed-delay communication.
  std::vector<Bandwidth> route_bandwidth;
  std::vector<Time> route_latency;
  /// How an iteration ends (docs/iterations.md): per pipeline stage the optimizer step of one GPU
  /// holding it (empty when unknown), the scenario's `iteration.barrier` and, with a global one,
  /// the barrier's own time.
  std::vector<Time> optimizer_step;
  IterationBarrier iteration_barrier = IterationBarrier::Global;
  Time barrier_time;
  /// A long-running generator may report a one-line status now and then; may be empty. The host
  /// shows it on a terminal only.
  std::function<void(const std::string&)> progress;
};

/// Published closed forms, evaluated for one input. Either may be absent.
struct Formula {
  std::optional<double> bubble_ratio;           // makespan-based ratio
  std::optional<double> peak_activation_units;  // max over devices, in stage-microbatch units
  std::string note;                             // the formula and its conditions, for reports
  /// A planning generator's own estimate of the replay's stage span (not a published formula);
  /// the runner appends to the note how far it was from the simulated replay.
  std::optional<Time> planned_stage_span;
  /// Likewise its estimate of the iteration time (the replay's `iteration_time_s`), when it
  /// planned for it.
  std::optional<Time> planned_iteration_time;
};

/// One number that decides why a generator cannot produce a table: {"activation limit",
/// "3.7GiB"}.
struct ConstraintFact {
  std::string name;
  std::string value;
};

/// The generator cannot produce a table within its constraints (m, p, v or a parameter does not
/// fit the schedule; the optimizer is below its memory floor). The message says what would fit.
/// The runner reports it as the outcome `infeasible` of that schedule (the others still run), with
/// `facts()`, the numbers that decide it, and `remedy()`, what to change in the settings given;
/// both may be empty. Carries no location; the runner adds the schedule entry's.
class ScheduleConstraintError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  ScheduleConstraintError(const std::string& what, std::vector<ConstraintFact> facts,
                          std::string remedy)
      : std::invalid_argument(what), facts_(std::move(facts)), remedy_(std::move(remedy)) {}
  const std::vector<ConstraintFact>& facts() const { return facts_; }
  const std::string& remedy() const { return remedy_; }

 private:
  std::vector<ConstraintFact> facts_;
  std::string remedy_;
};

/// The user stopped a generator (Ctrl-C inside a Python generator's code): not a failure of the
/// schedule, so it is no std::exception and the handlers that turn a generator's errors into an
/// outcome or a contract failure let it through to whoever started the run (the Python API
/// raises KeyboardInterrupt again). A host that can be interrupted derives its own from it.
class GenerationInterrupted {
 public:
  virtual ~GenerationInterrupted() = default;
};

struct GeneratorInfo {
  std::string name;
  std::string description;
  std::string placement;  // "straight", "loop", "V", ...
  std::string source;     // paper or code it follows
  std::vector<ParamSpec> params;
};

struct Generator {
  GeneratorInfo info;
  std::function<Table(const GeneratorInput&)> generate;
  std::function<Formula(const GeneratorInput&)> formula;  // may be empty: no closed form
  /// May be empty: the generator cannot emit its orders as a stream (schedules/order_stream.h,
  /// the premise there). When set, `generate(in)` is `stream(in)->materialize()`; it throws what
  /// `generate` throws. Runs replay a stream instead of a table beyond --max-ops (docs/engine.md).
  std::function<std::unique_ptr<OrderStream>(const GeneratorInput&)> stream{};
};

/// The host's registration interface. A generator package is one function `void f(Registrar&)`.
class Registrar {
 public:
  virtual ~Registrar() = default;
  /// Throws std::invalid_argument if the name is taken.
  virtual void add(Generator generator) = 0;
};

using RegisterFunction = void (*)(Registrar&);

}  // namespace bubblesim
