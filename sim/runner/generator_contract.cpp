#include "sim/runner/generator_contract.h"

#include <fmt/format.h>

#include <cmath>
#include <exception>
#include <optional>

#include "schedules/validator.h"
#include "sim/engine/engine.h"

namespace bubblesim {
namespace {

// Op times divisible by every chunk count up to 16, so per-chunk costs stay exact in picoseconds.
constexpr std::int64_t kUnitPs = 720720LL * 1000;
constexpr std::int64_t kUnitBytes = 720720LL * 64;

const ParamSpec* chunks_param(const Generator& generator) {
  for (const ParamSpec& spec : generator.info.params) {
    if ((spec.name == "chunks" || spec.name == "v") && spec.type == ParamType::Integer)
      return &spec;
  }
  return nullptr;
}

CostProfile contract_costs(std::int32_t devices, bool with_weight_time) {
  StageCost c;
  c.forward = Time::from_ps(kUnitPs);
  c.backward_input = Time::from_ps(kUnitPs);
  c.backward_weight = with_weight_time ? Time::from_ps(kUnitPs) : Time::zero();
  c.recompute = c.forward;
  c.activation = Bytes(kUnitBytes);
  return CostProfile::uniform(devices, c);
}

bool same_table(const Table& a, const Table& b) {
  return a.devices == b.devices && a.stages == b.stages && a.chunks == b.chunks &&
         a.microbatches == b.microbatches &&
         a.placement.device_of_stage == b.placement.device_of_stage &&
         a.placement.replica_of_microbatch == b.placement.replica_of_microbatch &&
         a.device_ops == b.device_ops;
}

class InputChecker {
 public:
  InputChecker(const Generator& generator, const ParamValues& overrides, std::int32_t p,
               std::int32_t m, std::int32_t v, bool has_v, std::vector<ContractFailure>& failures)
      : generator_(generator),
        overrides_(overrides),
        p_(p),
        m_(m),
        v_(v),
        has_v_(has_v),
        failures_(failures) {}

  void fail(std::string check, std::string message) {
    failures_.push_back(
        {generator_.info.name, p_, m_, has_v_ ? v_ : 0, std::move(check), std::move(message)});
  }

  GeneratorInput input(bool with_weight_time) const {
    GeneratorInput in;
    in.devices = p_;
    in.microbatches = m_;
    for (const ParamSpec& spec : generator_.info.params) {
      if (has_v_ && (spec.name == "chunks" || spec.name == "v")) {
        in.params.set(spec.name, std::int64_t{v_});
      } else if (overrides_.has(spec.name)) {
        in.params.set(spec.name, overrides_.all().at(spec.name));
      } else if (!spec.optional_default) {
        in.params.set(spec.name, spec.default_value);
      }
    }
    in.costs = contract_costs(p_, with_weight_time);
    return in;
  }

  /// Generates a table; nullopt (after recording a failure, or counting a rejection) when none.
  std::optional<Table> generate(const GeneratorInput& in, bool& rejected) {
    try {
      return generator_.generate(in);
    } catch (const ScheduleConstraintError&) {
      rejected = true;
    } catch (const std::exception& e) {
      fail("generate",
           fmt::format("threw an exception that is not a ScheduleConstraintError: {}", e.what()));
    } catch (const GenerationInterrupted&) {
      throw;  // the user stopped it: not the generator's failure
    } catch (...) {
      fail("generate", "threw a non-standard exception");
    }
    return std::nullopt;
  }

  std::optional<Formula> formula(const GeneratorInput& in) {
    if (!generator_.formula) return std::nullopt;
    try {
      return generator_.formula(in);
    } catch (const std::exception& e) {
      fail("formula",
           fmt::format("the formula threw for an input the generator accepts: {}", e.what()));
    }
    return std::nullopt;
  }

  std::optional<SimulationResult> replay(const Table& table, bool with_weight_time) {
    EngineInput in;
    in.table = &table;
    in.stage_costs = contract_costs(p_, with_weight_time).for_table(table.chunks);
    in.network = NoCostNetwork{};
    // Published peaks count an activation until the op that completes its backward (W when the
    // backward is split; docs/schedule-rules.md 6.2), so the contract replays with that convention.
    in.release = ReleaseConvention::BackwardComplete;
    SimulationResult result;
    try {
      result = simulate(std::move(in));
    } catch (const std::exception& e) {
      fail("replay", fmt::format("the engine refused the table: {}", e.what()));
      return std::nullopt;
    }
    if (result.status != RunStatus::Ok) {
      fail("replay", fmt::format("the idealized replay{} did not finish: {}: {}",
                                 with_weight_time ? "" : " with W = 0",
                                 run_status_name(result.status), result.failure));
      return std::nullopt;
    }
    return result;
  }

  /// Runs every check; returns false when the input was rejected.
  bool run() {
    GeneratorInput equal = input(true);
    bool rejected = false;
    std::optional<Table> table = generate(equal, rejected);
    if (rejected) return false;
    if (!table) return true;

    if (std::vector<std::string> problems = validate_table(*table); !problems.empty()) {
      fail("validate", fmt::format("{} problem(s), first: {}", problems.size(), problems.front()));
      return true;  // replaying an invalid table says nothing more
    }
    if (table->devices != p_ || table->microbatches != m_ || table->chunks < 1 ||
        table->stages != p_ * table->chunks || (has_v_ && table->chunks != v_)) {
      fail("shape",
           fmt::format(
               "the table has {} devices, {} microbatches, {} stages and {} chunks; expected {} "
               "devices, {} microbatches and stages = devices x chunks{}",
               table->devices, table->microbatches, table->stages, table->chunks, p_, m_,
               has_v_ ? fmt::format(" with {} chunks", v_) : ""));
      return true;
    }

    bool again_rejected = false;
    std::optional<Table> again = generate(equal, again_rejected);
    if (again_rejected || (again && !same_table(*table, *again))) {
      fail("deterministic", "two calls with the same input gave different tables");
    }

    std::optional<SimulationResult> equal_replay = replay(*table, true);
    if (equal_replay) {
      std::optional<Formula> f = formula(equal);
      if (f && f->peak_activation_units) {
        double replayed = equal_replay->metrics.memory.peak_activation_units;
        if (std::abs(*f->peak_activation_units - replayed) > 1e-9) {
          fail("peak", fmt::format("closed-form peak activation {} chunk units, replay (T_F = T_B "
                                   "= T_W) peaks at {}",
                                   *f->peak_activation_units, replayed));
        }
      }
    }

    // The bubble closed forms are stated for equal F and B and no separate weight time.
    GeneratorInput no_weight = input(false);
    bool no_weight_rejected = false;
    std::optional<Table> no_weight_table = generate(no_weight, no_weight_rejected);
    if (no_weight_rejected) {
      fail("generate", "rejects the input when T_W = 0 but accepts it when T_W = T_F");
    } else if (no_weight_table) {
      if (std::vector<std::string> problems = validate_table(*no_weight_table); !problems.empty()) {
        fail("validate", fmt::format("with T_W = 0: {} problem(s), first: {}", problems.size(),
                                     problems.front()));
      } else if (std::optional<SimulationResult> r = replay(*no_weight_table, false)) {
        std::optional<Formula> f = formula(no_weight);
        if (f && f->bubble_ratio) {
          double replayed = r->metrics.bubble_ratio;
          if (std::abs(*f->bubble_ratio - replayed) > 1e-9) {
            fail("bubble",
                 fmt::format(
                     "closed-form bubble ratio {:.12g}, replay (T_F = T_B, T_W = 0) gives {:.12g}",
                     *f->bubble_ratio, replayed));
          }
        }
      }
    }
    return true;
  }

 private:
  const Generator& generator_;
  const ParamValues& overrides_;
  std::int32_t p_, m_, v_;
  bool has_v_;
  std::vector<ContractFailure>& failures_;
};

}  // namespace

std::string to_string(const ContractFailure& f) {
  std::string where;
  if (f.devices > 0) {
    where = fmt::format(" p={} m={}", f.devices, f.microbatches);
    if (f.chunks > 0) where += fmt::format(" v={}", f.chunks);
  }
  return fmt::format("{}{}: {}: {}", f.generator, where, f.check, f.message);
}

std::vector<ContractFailure> check_generator_contract(const Generator& generator,
                                                      const ContractGrid& grid,
                                                      ContractStats* stats) {
  std::vector<ContractFailure> failures;
  ContractStats counts;
  const ParamSpec* v_spec = chunks_param(generator);
  std::vector<std::int32_t> chunk_values =
      v_spec != nullptr ? grid.chunks : std::vector<std::int32_t>{1};
  for (std::int32_t p : grid.devices) {
    for (std::int32_t m : grid.microbatches) {
      for (std::int32_t v : chunk_values) {
        if (v_spec != nullptr && v_spec->check && v_spec->check(ParamValue{std::int64_t{v}})) {
          ++counts.rejected;  // the parameter's own check refuses this v
          continue;
        }
        InputChecker checker(generator, grid.params, p, m, v, v_spec != nullptr, failures);
        if (checker.run()) {
          ++counts.accepted;
        } else {
          ++counts.rejected;
        }
      }
    }
  }
  if (counts.accepted == 0) {
    failures.push_back(
        {generator.info.name, 0, 0, 0, "accepts",
         fmt::format("rejected every one of the {} inputs of the contract grid", counts.rejected)});
  }
  if (stats != nullptr) *stats = counts;
  return failures;
}

}  // namespace bubblesim
