#pragma once
// The property "every search honours its time limit" for one small instance drawn from
// a byte string: an `optimized` run (any placement, method, objective, offload and recompute
// allowed or not, a budget from below M_B to far above m M_B) ends within its `time_limit` plus
// one second, returns a table the engine replays within the budget (or refuses the instance as
// a schedule constraint), and its certified lower bound is not above the replayed cost.
// tests/schedules/optimizer/optimizer_time_limit_test.cpp draws the bytes from a fixed seed;
// tests/fuzz/fuzz_optimizer.cpp takes them from libFuzzer. No doctest here: check_time_limit
// returns what failed, or nothing.

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "schedules/builtin_generators.h"
#include "schedules/generator.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"

namespace bubblesim::testing {

/// Reads small numbers from a byte string (zeros once it runs out).
class BytePicker {
 public:
  BytePicker(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  /// A number in [lo, hi].
  int in(int lo, int hi) {
    std::uint32_t v = 0;
    for (int k = 0; k < 2; ++k) v = v * 256 + (at_ < size_ ? data_[at_++] : 0);
    return lo + static_cast<int>(v % static_cast<std::uint32_t>(hi - lo + 1));
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

struct TimeLimitCase {
  GeneratorInput input;
  StageCost cost;
  double units = 0, time_limit_s = 0;
  std::string description;
};

/// The instance of `bytes`: p 2-8, m 1-32, op times of 0.1-3 ms (on a 0.1 ms grid or off it),
/// a delay of 0-0.3 ms, M_W 0-1 M_B (M_W > M_B, sequence parallelism's case, is checked elsewhere),
/// a budget of 0.5 M_B to 3 m M_B, every placement, method and objective, offload and recompute,
/// and a time limit of `min_limit_s` to 2.5x that.
inline TimeLimitCase time_limit_case(const std::uint8_t* bytes, std::size_t size,
                                     double min_limit_s) {
  BytePicker pick(bytes, size);
  TimeLimitCase c;
  const int p = pick.in(2, 8), m = pick.in(1, 32);
  const bool on_grid = pick.in(0, 3) != 0;
  auto time = [&](int tenths) {
    return Time::from_ps(tenths * std::int64_t{100'000'000} +
                         (on_grid ? 0 : pick.in(1, 997) * std::int64_t{1000}));
  };
  c.cost.forward = time(pick.in(1, 30));
  c.cost.backward_input = time(pick.in(1, 30));
  c.cost.backward_weight = time(pick.in(1, 30));
  c.cost.activation = Bytes(std::int64_t{1} << 30);
  c.cost.weight_grad = Bytes((std::int64_t{1} << 30) / 10 * pick.in(0, 10));
  c.cost.stage_input = Bytes((std::int64_t{1} << 30) / 8 * pick.in(0, 4));
  const double units_choices[] = {
      0.5,    1, 1.5, 2, 0.5 * p, static_cast<double>(p), 1.25 * p, 2.0 * p, static_cast<double>(m),
      3.0 * m};
  c.units = units_choices[pick.in(0, 9)];
  const char* placements[] = {"straight", "v", "interleaved", "auto"};
  const char* methods[] = {"auto", "milp", "heuristic"};
  const char* objectives[] = {"stage-span", "makespan", "iteration"};
  const std::string placement = placements[pick.in(0, 3)];
  const std::string method = methods[pick.in(0, 2)];
  const std::string objective = objectives[pick.in(0, 2)];
  const bool offload = pick.in(0, 2) == 0, recompute = pick.in(0, 2) == 0;
  c.time_limit_s = min_limit_s * (1 + 0.5 * pick.in(0, 3));
  GeneratorInput& in = c.input;
  in.devices = p;
  in.microbatches = m;
  in.costs = CostProfile::uniform(p, c.cost);
  in.delay = Time::from_ps(pick.in(0, 3) * std::int64_t{100'000'000});
  const Bandwidth link = Bandwidth::bytes_per_second(c.cost.activation.as_double() /
                                                     (pick.in(1, 4) * c.cost.forward.seconds()));
  in.offload_d2h.assign(static_cast<std::size_t>(p), link);
  in.offload_h2d = in.offload_d2h;
  in.params.set("budget_units", c.units);
  in.params.set("placement", placement);
  in.params.set("method", method);
  in.params.set("objective", objective);
  in.params.set("offload", offload);
  in.params.set("recompute", recompute);
  in.params.set("time_limit", Time::from_seconds(c.time_limit_s));
  c.description = fmt::format(
      "p {} m {} F/B/W {}/{}/{} ps delay {} ps M_W {} budget {} M_B placement {} method {} "
      "objective {} offload {} recompute {} time_limit {} s",
      p, m, c.cost.forward.ps(), c.cost.backward_input.ps(), c.cost.backward_weight.ps(),
      in.delay.ps(), c.cost.weight_grad.as_double() / c.cost.activation.as_double(), c.units,
      placement, method, objective, offload, recompute, c.time_limit_s);
  return c;
}

#if defined(__SANITIZE_ADDRESS__)
#define BUBBLESIM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUBBLESIM_TEST_SANITIZED 1
#endif
#endif

/// How far past its time limit a search may end: after the limit it still fits its best order
/// into a table and checks it, about 0.1 s in a Release build. Under ASan that work runs 3-5x
/// slower, and CI runs two test programs on its two cores at once (a 2 s limit ended at 3.11 s
/// there), so sanitized builds allow 3 s.
#ifdef BUBBLESIM_TEST_SANITIZED
inline constexpr double kTimeLimitOvershootS = 3.0;
#else
inline constexpr double kTimeLimitOvershootS = 1.0;
#endif

/// What failed for `c`, or nothing. `overshoot_s`: how far past its limit a run may end.
inline std::optional<std::string> check_time_limit(const TimeLimitCase& c,
                                                   double overshoot_s = kTimeLimitOvershootS) {
  static const Registry registry = builtin_registry();
  const Generator* optimized = registry.find("optimized");
  const auto started = std::chrono::steady_clock::now();
  Table t;
  Formula f;
  try {
    t = optimized->generate(c.input);
    f = optimized->formula(c.input);  // the cached outcome of that run
  } catch (const ScheduleConstraintError&) {
    t = Table{};  // refused (no order fits the limit): fine, if in time
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (seconds > c.time_limit_s + overshoot_s)
    return fmt::format("ran {:.2f} s against a time limit of {} s", seconds, c.time_limit_s);
  if (t.devices == 0) return std::nullopt;
  EngineInput e;
  e.table = &t;
  e.stage_costs = c.input.costs.for_table(t.chunks);
  e.network = FixedDelayNetwork{c.input.delay};
  e.memory_budget.assign(
      static_cast<std::size_t>(t.devices),
      Bytes(static_cast<std::int64_t>(c.units * c.cost.activation.as_double() + 0.5)));
  e.offload_bandwidth = c.input.offload_d2h.front();
  const SimulationResult r = simulate(e);
  if (r.status != RunStatus::Ok)
    return fmt::format("the table does not replay within the budget: {} {}",
                       run_status_name(r.status), r.failure);
  // The certified lower bound against the replay (the iteration objective's bound is checked in
  // optimizer_test.cpp, with the engine's iteration replay).
  const std::string objective = c.input.params.text("objective");
  if (objective == "iteration") return std::nullopt;
  const std::regex bound_re("certified lower bound ([0-9.e+-]+) ms");
  std::smatch match;
  if (!std::regex_search(f.note, match, bound_re)) return "no certified lower bound in the note";
  const double bound_ms = std::stod(match[1].str());
  const double cost_ms = (objective == "makespan" ? r.metrics.makespan.seconds()
                                                  : r.metrics.stage_span_max.seconds()) *
                         1e3;
  if (bound_ms > cost_ms * (1 + 1e-5))
    return fmt::format("certified lower bound {} ms above the replayed {} ms", bound_ms, cost_ms);
  return std::nullopt;
}

}  // namespace bubblesim::testing
