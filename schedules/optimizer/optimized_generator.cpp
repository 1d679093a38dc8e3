// optimized: a schedule found by optimization instead of a fixed rule (OptPipe; the zero-bubble
// paper's automatic scheduler and ILP, Qi et al., ICLR 2024, section 3 and Appendix G). Straight
// or V placement (two chunks per device, as ZB-V), split backward (B and W). Minimizes the largest
// per-device span (the zero-bubble paper's cost), the makespan or the iteration time under a
// per-device activation limit, with the exact fixed-delay replay semantics, by an anytime search
// (list scheduling seeds, local search with restarts, the MILP on windows of the order) and a MILP
// solved with CBC that proves optimality on small inputs. With offload: true / recompute: true it
// also decides which activations go to host memory (O / L ops on the copy engines) or are
// recomputed (R ops). See docs/optimizer.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "schedules/generator.h"
#include "schedules/optimizer/optimize.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim {
namespace {

using optimizer::Objective;
using optimizer::OptimizeOutcome;
using optimizer::PlacementKind;
using optimizer::Problem;

constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max() / 8;

/// `plan_costs: median`: plan from the median stage (Problem::plan_with_median_stage).
bool plans_from_median(const GeneratorInput& in) {
  return in.params.has("plan_costs") && in.params.text("plan_costs") == "median";
}

/// Problem from the input for one placement: per-stage costs of the table's stages (halved chunks
/// for V), the delays per boundary, the per-device limits.
Problem make_problem(const GeneratorInput& in, PlacementKind placement) {
  const std::int32_t p = in.devices, m = in.microbatches;
  if (p < 1 || m < 1)
    throw ScheduleConstraintError("optimized needs at least 1 device and 1 microbatch");
  if (static_cast<std::int32_t>(in.costs.stages.size()) != p) {
    throw ScheduleConstraintError(fmt::format(
        "optimized needs one cost per stage: {} stages, {} costs", p, in.costs.stages.size()));
  }
  Problem pr;
  pr.set_shape(p, m, placement);
  const std::vector<StageCost> costs =
      in.costs.for_table(placement == PlacementKind::Straight ? 1 : 2);
  for (const StageCost& c : costs) {
    pr.forward_ps.push_back(c.forward.ps());
    pr.backward_ps.push_back(c.backward_input.ps());
    pr.weight_ps.push_back(c.backward_weight.ps());
    pr.memory.activation_bytes.push_back(c.activation.count());
    // As the replay holds them (schedules/activation_memory.h): M_W may exceed M_B (sequence
    // parallelism), a recomputed F keeps its stage input, and a B that recomputes per unit
    // holds one unit while it runs.
    pr.memory.weight_grad_bytes.push_back(c.weight_grad.count());
    pr.memory.unit_bytes.push_back(c.backward_recompute.unit.count());
    pr.memory_ops.recompute_ps.push_back(
        (c.recompute > Time::zero() ? c.recompute : c.forward).ps());
    pr.memory_ops.stage_input_bytes.push_back(c.stage_input.count());
  }
  pr.memory.release = in.release;
  pr.set_uniform_comm(in.delay.ps());
  // With a topology: each boundary's transfer at its route's bottleneck bandwidth plus latency.
  const auto pu = static_cast<std::size_t>(p);
  if (in.route_bandwidth.size() == 2 * pu && in.route_latency.size() == 2 * pu) {
    auto transfer = [&](std::int32_t from, std::int32_t to, Bytes bytes) -> std::int64_t {
      if (to != from + 1 && to != from - 1) return 0;  // only neighbours' routes are estimated
      const auto k = 2 * static_cast<std::size_t>(from) + (to == from + 1 ? 0 : 1);
      const Bandwidth bw = in.route_bandwidth[k];
      const Time t = in.route_latency[k] +
                     (bw.bytes_per_second() > 0 ? transfer_time(bytes, bw) : Time::zero());
      return t.ps();
    };
    for (std::int32_t s = 0; s + 1 < pr.stages; ++s) {
      const std::int32_t a = pr.device(s), b = pr.device(s + 1);
      if (a == b) continue;
      const Bytes bytes = costs[static_cast<std::size_t>(s)].p2p;
      pr.comm.forward_ps[static_cast<std::size_t>(s)] = transfer(a, b, bytes);
      pr.comm.backward_ps[static_cast<std::size_t>(s)] = transfer(b, a, bytes);
    }
  }
  if (plans_from_median(in)) pr.plan_with_median_stage();
  // The iteration objective (docs/iterations.md): per device the optimizer steps of the stages it
  // holds (a pipeline stage's step divided among its chunks, as the engine does), the scenario's
  // barrier and its own time.
  if (in.optimizer_step.size() == pu) {
    const std::int64_t chunks = pr.stages / p;
    pr.iteration.post_ps.assign(pu, 0);
    for (std::int32_t s = 0; s < pr.stages; ++s) {
      pr.iteration.post_ps[static_cast<std::size_t>(pr.device(s))] +=
          in.optimizer_step[static_cast<std::size_t>(s / chunks)].ps() / chunks;
    }
  }
  pr.iteration.global_barrier = in.iteration_barrier == IterationBarrier::Global;
  pr.iteration.barrier_ps = pr.iteration.global_barrier ? in.barrier_time.ps() : 0;
  const std::string objective = in.params.has("objective") ? in.params.text("objective") : "";
  pr.objective = objective == "makespan"    ? Objective::Makespan
                 : objective == "iteration" ? Objective::Iteration
                                            : Objective::StageSpan;
  pr.memory.limit_bytes.assign(static_cast<std::size_t>(p), kUnlimited);
  for (std::int32_t d = 0; d < p; ++d) {
    const auto du = static_cast<std::size_t>(d);
    std::int64_t activation = 0, static_bytes = 0;  // of one device-stage: its chunks together
    for (std::int32_t s : pr.stages_of(d)) {
      activation += pr.memory.activation_bytes[static_cast<std::size_t>(s)];
      static_bytes += costs[static_cast<std::size_t>(s)].static_memory.count();
    }
    if (in.params.has("budget_units")) {
      pr.memory.limit_bytes[du] = static_cast<std::int64_t>(
          std::floor(in.params.real("budget_units") * static_cast<double>(activation) + 0.5));
    } else if (in.params.has("budget")) {
      pr.memory.limit_bytes[du] = in.params.size("budget").count() - static_bytes;
    } else if (!in.memory_budget.empty()) {
      pr.memory.limit_bytes[du] = in.memory_budget[du].count() - static_bytes;
    }
  }
  pr.memory_ops.allow_offload = in.params.has("offload") && in.params.boolean("offload");
  pr.memory_ops.allow_recompute = in.params.has("recompute") && in.params.boolean("recompute");
  if (pr.memory_ops.allow_offload) {
    const auto n = static_cast<std::size_t>(p);
    if (in.offload_d2h.size() != n || in.offload_h2d.size() != n) {
      throw ScheduleConstraintError(
          "offload: true needs a host for every GPU: memory.offload.bandwidth with fixed-delay "
          "communication, or a topology whose GPUs reach a host vertex");
    }
    for (std::int32_t s = 0; s < pr.stages; ++s) {
      const Bytes moved(pr.memory.activation_bytes[static_cast<std::size_t>(s)]);
      const auto du = static_cast<std::size_t>(pr.device(s));
      pr.memory_ops.d2h_ps.push_back(transfer_time(moved, in.offload_d2h[du]).ps());
      pr.memory_ops.h2d_ps.push_back(transfer_time(moved, in.offload_h2d[du]).ps());
    }
  } else {
    pr.memory_ops.d2h_ps.assign(static_cast<std::size_t>(pr.stages), 0);
    pr.memory_ops.h2d_ps.assign(static_cast<std::size_t>(pr.stages), 0);
  }
  return pr;
}

optimizer::OptimizeSettings make_settings(const GeneratorInput& in) {
  optimizer::OptimizeSettings s;
  if (in.params.has("time_limit")) s.time_limit_s = in.params.duration("time_limit").seconds();
  if (in.params.has("budget_evals")) s.budget_evals = in.params.integer("budget_evals");
  if (in.params.has("gap")) s.gap = in.params.real("gap");
  if (in.params.has("seed")) s.seed = static_cast<std::uint64_t>(in.params.integer("seed"));
  s.progress = in.progress;
  const std::string method = in.params.has("method") ? in.params.text("method") : "auto";
  s.method = method == "milp"        ? optimizer::Method::Milp
             : method == "heuristic" ? optimizer::Method::Heuristic
                                     : optimizer::Method::Auto;
  return s;
}

std::vector<PlacementKind> placements(const GeneratorInput& in) {
  const std::string p = in.params.has("placement") ? in.params.text("placement") : "straight";
  if (p == "v") return {PlacementKind::V};
  if (p == "interleaved") return {PlacementKind::Interleaved};
  if (p == "auto") return {PlacementKind::Straight, PlacementKind::V, PlacementKind::Interleaved};
  return {PlacementKind::Straight};
}

std::string cache_key(const GeneratorInput& in, const std::vector<Problem>& problems,
                      const optimizer::OptimizeSettings& s) {
  std::string key = fmt::format("{} {} {} {} {} {}|", static_cast<int>(s.method), s.time_limit_s,
                                s.budget_evals, s.gap, s.seed, problems.size());
  for (const Problem& pr : problems) {
    key += fmt::format("{} {} {} {} {} {} {} {} {} {}|", pr.devices, pr.microbatches,
                       static_cast<int>(pr.placement), static_cast<int>(pr.objective),
                       static_cast<int>(pr.memory.release), pr.memory_ops.allow_offload,
                       pr.memory_ops.allow_recompute, pr.iteration.global_barrier,
                       pr.iteration.barrier_ps, fmt::join(pr.memory.limit_bytes, ","));
    for (std::size_t i = 0; i < pr.forward_ps.size(); ++i) {
      key += fmt::format("{},{},{},{},{},{},{},{},{};", pr.forward_ps[i], pr.backward_ps[i],
                         pr.weight_ps[i], pr.memory.activation_bytes[i],
                         pr.memory.weight_grad_bytes[i], pr.memory_ops.recompute_ps[i],
                         pr.memory_ops.stage_input_bytes[i], pr.memory_ops.d2h_ps[i],
                         pr.memory_ops.h2d_ps[i]);
    }
    key += fmt::format("{}|{}|{}|", fmt::join(pr.comm.forward_ps, ","),
                       fmt::join(pr.comm.backward_ps, ","), fmt::join(pr.iteration.post_ps, ","));
  }
  if (plans_from_median(in)) key += "median";
  return key;
}

/// The winning placement's problem and outcome.
struct Result {
  Problem problem;
  OptimizeOutcome outcome;
  std::string placements_tried;  // "straight 0.1585 ms, v 0.1201 ms" with placement: auto
  bool median_plan = false;      // plan_costs: median
};

/// Results by input, so formula() reports the run that generate() did (owned by the Generator).
class OutcomeCache {
 public:
  std::shared_ptr<const Result> get(const GeneratorInput& in) {
    std::vector<Problem> problems;
    for (PlacementKind k : placements(in)) problems.push_back(make_problem(in, k));
    optimizer::OptimizeSettings settings = make_settings(in);
    const std::string key = cache_key(in, problems, settings);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = outcomes_.find(key); it != outcomes_.end()) return it->second;
    }
    // With placement: auto each placement gets an equal share of the wall-clock time (and the full
    // evaluation budget, so the result stays deterministic); the best prediction wins.
    settings.time_limit_s /= static_cast<double>(problems.size());
    auto result = std::make_shared<Result>();
    result->median_plan = plans_from_median(in);
    bool have = false;
    for (Problem& pr : problems) {
      OptimizeOutcome out = optimizer::optimize(pr, settings);
      if (problems.size() > 1) {
        if (!result->placements_tried.empty()) result->placements_tried += ", ";
        result->placements_tried +=
            out.feasible ? fmt::format("{} {:.6g} ms", optimizer::placement_name(pr.placement),
                                       static_cast<double>(out.cost) * 1e-9)
                         : fmt::format("{} infeasible", optimizer::placement_name(pr.placement));
      }
      if (!have ||
          (out.feasible && (!result->outcome.feasible || out.cost < result->outcome.cost))) {
        result->problem = std::move(pr);
        result->outcome = std::move(out);
        have = true;
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (outcomes_.size() > 64) outcomes_.clear();
    return outcomes_.emplace(key, std::move(result)).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Result>> outcomes_;
};

/// No order fits the activation limits: the device with the least room against its smallest
/// activation, its numbers, and what to change among the settings given.
[[noreturn]] void throw_below_floor(const GeneratorInput& in, const Problem& pr) {
  const std::vector<StageCost> costs = in.costs.for_table(pr.stages / pr.devices);
  std::int32_t worst = 0;
  double least_room = std::numeric_limits<double>::infinity();
  std::int64_t smallest_of_worst = 0;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
    for (std::int32_t s : pr.stages_of(d))
      smallest = std::min(smallest, pr.memory.activation_bytes[static_cast<std::size_t>(s)]);
    const double room = static_cast<double>(pr.memory.limit_bytes[static_cast<std::size_t>(d)]) /
                        static_cast<double>(std::max<std::int64_t>(smallest, 1));
    if (room < least_room) {
      least_room = room;
      worst = d;
      smallest_of_worst = smallest;
    }
  }
  Bytes static_bytes;
  std::int64_t weight_grad = 0;
  for (std::int32_t s : pr.stages_of(worst)) {
    static_bytes = static_bytes + costs[static_cast<std::size_t>(s)].static_memory;
    weight_grad = std::max(weight_grad, pr.memory.weight_grad_bytes[static_cast<std::size_t>(s)]);
  }
  const Bytes limit(
      std::max<std::int64_t>(pr.memory.limit_bytes[static_cast<std::size_t>(worst)], 0));
  std::vector<ConstraintFact> facts = {
      {"activation limit", to_string(limit)},
      {"one activation (M_B)", to_string(Bytes(smallest_of_worst))},
      {"weight-gradient memory (M_W)", to_string(Bytes(weight_grad))},
      {"static memory", to_string(static_bytes)}};
  std::vector<std::string> remedies;
  remedies.push_back(in.params.has("budget_units") ? "raise budget_units"
                     : in.params.has("budget")     ? "raise budget"
                                                   : "raise memory.budget");
  if (!pr.memory_ops.allow_offload) remedies.push_back("allow offload: true");
  if (!pr.memory_ops.allow_recompute) remedies.push_back("allow recompute: true");
  if (pr.memory_ops.allow_offload && pr.memory_ops.allow_recompute)
    remedies.push_back("use more stages (smaller activations per device)");
  throw ScheduleConstraintError(
      fmt::format("optimized: no order fits the activation limit of device {}: it needs room for "
                  "at least one activation (M_B) and the weight-gradient memory (M_W) its "
                  "pending W's keep",
                  worst),
      std::move(facts), fmt::format("{}", fmt::join(remedies, ", or ")));
}

Table to_table(const GeneratorInput& in, const Result& r) {
  if (!r.outcome.feasible) throw_below_floor(in, r.problem);
  const PlacementKind k = r.problem.placement;
  Table t =
      Table::empty(in.devices, k == PlacementKind::Straight ? 1 : 2, in.microbatches,
                   k == PlacementKind::V             ? Placement::v_shape(in.devices)
                   : k == PlacementKind::Interleaved ? Placement::loop(in.devices, 2 * in.devices)
                                                     : Placement::straight(in.devices));
  for (std::int32_t d = 0; d < in.devices; ++d) {
    for (const optimizer::Step& st : r.outcome.order[static_cast<std::size_t>(d)]) {
      t.device_ops[static_cast<std::size_t>(d)].push_back(
          Op{optimizer::op_kind(st.kind), st.stage, st.microbatch});
    }
  }
  return t;
}

std::string limit_text(const Problem& pr) {
  std::vector<std::string> parts;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    std::int64_t activation = 0;
    for (std::int32_t s : pr.stages_of(d))
      activation += pr.memory.activation_bytes[static_cast<std::size_t>(s)];
    const std::int64_t limit = pr.memory.limit_bytes[static_cast<std::size_t>(d)];
    parts.push_back(
        limit >= kUnlimited || activation <= 0
            ? std::string("unlimited")
            : fmt::format("{:.3g}", static_cast<double>(limit) / static_cast<double>(activation)));
  }
  bool same = true;
  for (const std::string& s : parts) same = same && s == parts.front();
  if (same) return parts.front() == "unlimited" ? parts.front() : parts.front() + " M_B per device";
  return fmt::format("[{}] M_B per device", fmt::join(parts, ", "));
}

Formula to_formula(const Result& r) {
  Formula f;
  const OptimizeOutcome& o = r.outcome;
  if (!o.feasible) {
    f.note = "optimized: infeasible under the activation limit";
    return f;
  }
  const Problem& pr = r.problem;
  f.planned_stage_span = Time::from_ps(optimizer::evaluate(pr, o.order).span_max);
  if (pr.objective == Objective::Iteration) f.planned_iteration_time = Time::from_ps(o.cost);
  const double ms = 1e-9;
  // No wall-clock times here, so reports stay byte-identical for a given budget_evals: the solve
  // time is the run's `generate_s` (JSON `results[].run`).
  f.note = fmt::format(
      "optimized by {} ({}, {} placement): predicted {} {:.6g} ms, certified lower bound {:.6g} "
      "ms, gap {:.3g}%{}; activation limit {}; {} evaluations, {} restarts, {} improvements; "
      "start {} ({:.6g} ms)",
      o.method, o.proven_optimal ? "optimal" : "not proven optimal",
      optimizer::placement_name(pr.placement), optimizer::objective_name(pr.objective),
      static_cast<double>(o.cost) * ms, static_cast<double>(o.lower_bound) * ms, 100.0 * o.gap,
      o.milp_run ? fmt::format(", MILP {} ({} binaries)", o.milp.status, o.milp.binaries)
                 : std::string(),
      limit_text(pr), o.search.evaluations, o.search.restarts, o.search.improvements,
      o.search.seed_name, static_cast<double>(o.search.seed_cost) * ms);
  if (pr.memory_ops_allowed()) {
    const std::int64_t offloaded = o.plan.count(optimizer::ActivationChoice::Offloaded);
    const std::int64_t recomputed = o.plan.count(optimizer::ActivationChoice::Recomputed);
    f.note += fmt::format("; decided: {} of {} activations offloaded{}, {} recomputed{}", offloaded,
                          o.plan.choice.size(), pr.memory_ops.allow_offload ? "" : " (not allowed)",
                          recomputed, pr.memory_ops.allow_recompute ? "" : " (not allowed)");
  }
  if (!o.milp_skipped.empty()) f.note += fmt::format("; MILP not run: {}", o.milp_skipped);
  if (!r.placements_tried.empty())
    f.note += fmt::format("; placements tried: {}", r.placements_tried);
  if (r.median_plan)
    f.note +=
        "; planned from the median stage's costs (plan_costs: median), replayed with each "
        "stage's own";
  return f;
}

ParamSpec typed_param(std::string name, ParamType type, ParamValue value, std::string help,
                      bool optional) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = type;
  s.default_value = std::move(value);
  s.help = std::move(help);
  s.optional_default = optional;
  return s;
}

std::vector<ParamSpec> optimized_params() {
  ParamSpec budget_units =
      typed_param("budget_units", ParamType::Real, 0.0,
                  "activation limit per device in units of M_B (one microbatch on one "
                  "device-stage; with V its two chunks together); wins over budget",
                  true);
  budget_units.check = [](const ParamValue& v) -> std::optional<std::string> {
    if (std::get<double>(v) <= 0) return "a positive number of activations (M_B)";
    return std::nullopt;
  };
  ParamSpec time_limit = typed_param(
      "time_limit", ParamType::Duration, Time::from_seconds(20),
      "wall-clock budget of the anytime search (without budget_evals it runs until then unless "
      "it proves optimality or reaches gap)",
      false);
  time_limit.check = [](const ParamValue& v) -> std::optional<std::string> {
    if (std::get<Time>(v) <= Time::zero()) return "a positive duration";
    return std::nullopt;
  };
  ParamSpec budget_evals = typed_param(
      "budget_evals", ParamType::Integer, std::int64_t{0},
      "search budget in evaluations (replays; a MILP window counts as its nodes): the result is "
      "deterministic for a given seed; time_limit still stops it",
      true);
  budget_evals.check = [](const ParamValue& v) -> std::optional<std::string> {
    if (std::get<std::int64_t>(v) < 1) return "a positive number of evaluations";
    return std::nullopt;
  };
  ParamSpec gap = typed_param("gap", ParamType::Real, 0.0,
                              "stop early once (cost - lower bound) / cost is at most this", false);
  gap.check = [](const ParamValue& v) -> std::optional<std::string> {
    const double g = std::get<double>(v);
    if (g < 0 || g >= 1) return "a fraction in [0, 1)";
    return std::nullopt;
  };
  ParamSpec seed = typed_param("seed", ParamType::Integer, std::int64_t{1},
                               "seed of the search's random moves", false);
  return {
      choice_param("objective", "stage-span", {"stage-span", "makespan", "iteration"},
                   "minimize the largest per-device span (the ZB paper's cost), the makespan, or "
                   "the iteration time with the work after the last op (docs/optimizer.md)"),
      choice_param("placement", "straight", {"straight", "v", "interleaved", "auto"},
                   "straight: stage s on device s; v: two chunks per device as ZB-V; interleaved: "
                   "two chunks per device, stages d and p + d (as PipeOffload); auto: all three, "
                   "the best prediction wins"),
      typed_param("budget", ParamType::Size, Bytes::zero(),
                  "device memory budget (default: the scenario's memory.budget, per device); the "
                  "activation limit is the budget minus the device's static memory",
                  true),
      budget_units,
      boolean_param("offload", false,
                    "may the optimizer offload activations to host memory (O after the F, L "
                    "before the B, at the host route's bandwidth); needs memory.offload.bandwidth "
                    "or a topology with a host"),
      boolean_param("recompute", false,
                    "may the optimizer recompute activations (the F keeps the stage input, R "
                    "before the B)"),
      time_limit,
      budget_evals,
      gap,
      seed,
      choice_param("plan_costs", "stages", {"stages", "median"},
                   "stages: plan with each stage's own costs; median: plan every stage with the "
                   "upper median over stages of F, B, W and the transfer, M_W = M_B / 2, as the "
                   "zero-bubble runtime plans its ZB-1p/ZB-2p (the replay uses each stage's own)"),
      choice_param("method", "auto", {"auto", "milp", "heuristic"},
                   "auto: the search, then the full MILP when the instance is small (p m <= 32) "
                   "and not yet proven; milp: always the full MILP after the search; heuristic: "
                   "the search alone (no MILP windows either)")};
}

}  // namespace

void register_optimized(Registrar& registrar) {
  auto cache = std::make_shared<OutcomeCache>();
  registrar.add(Generator{
      GeneratorInfo{"optimized",
                    "optimized order of F, B (inputs) and W (weights) under a per-device "
                    "activation limit, straight or V placement: anytime search (list scheduling, "
                    "local search with restarts, MILP windows) and a MILP (CBC) that proves "
                    "small instances; predicted time = the fixed-delay replay",
                    "straight or V",
                    "OptPipe (arXiv 2510.05186); Qi et al., Zero Bubble Pipeline Parallelism, ICLR "
                    "2024, section 3.1 (heuristic) and Appendix G (ILP)",
                    optimized_params()},
      [cache](const GeneratorInput& in) { return to_table(in, *cache->get(in)); },
      [cache](const GeneratorInput& in) { return to_formula(*cache->get(in)); }});
}

}  // namespace bubblesim
