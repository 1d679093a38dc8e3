// Chimera (Li & Hoefler, SC'21): two pipelines in opposite directions over the same D devices.
// Construction (docs/schedule-rules.md 4.15, docs/schedules-zoo-c.md): a table of unit steps, F and
// B one step each. An "instance" is one 1F1B pipeline of n = D/(2f) microbatches in one direction
// and one device rotation; its microbatch x runs F(s) at step t0 + 2x + s and B(s) at step t0 + 2x
// + 2D - 1 - s. A basic unit is f down and f up instances (D microbatches). Units are concatenated
// in one of three ways:
//   direct            unit u+1 starts when unit u has finished on every device (its op lists
//                     are appended), so every unit repeats its warm-up and cool-down bubbles;
//   overlapped        the repository generator (Shigangli/Chimera chimera_pipeline_rank.py): the
//                     next instance of each direction and rotation starts 2D steps after the
//                     previous one, filling the previous unit's cool-down;
//   forward-doubling  bubblesim's reading of the paper's option: a unit of 2D microbatches in
//                     which every slot of the basic unit runs two microbatches back to back
//                     (twice the activations in flight), units concatenated directly.
// The device order is the ops sorted by step. Two ops claiming one device in one step would be a
// bug of this construction and is reported as an internal error, never silently resolved.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

enum class Concatenation { Direct, Overlapped, ForwardDoubling };

struct ChimeraShape {
  std::int32_t devices = 0;       // D (= stages)
  std::int32_t microbatches = 0;  // N
  std::int32_t pipelines = 1;     // f: down pipelines (= up pipelines) per unit
  Concatenation concatenation = Concatenation::Direct;

  std::int32_t instance_size() const { return devices / (2 * pipelines); }  // n
  std::int32_t per_slot() const { return concatenation == Concatenation::ForwardDoubling ? 2 : 1; }
  std::int32_t unit_microbatches() const { return devices * per_slot(); }
  /// Steps of one basic unit (n = D/(2f) microbatches per instance): 2n + 2D - 2.
  std::int64_t unit_slots() const { return 2 * instance_size() + 2 * devices - 2; }
};

Concatenation parse_concatenation(const std::string& text) {
  if (text == "overlapped") return Concatenation::Overlapped;
  if (text == "forward-doubling") return Concatenation::ForwardDoubling;
  return Concatenation::Direct;
}

std::string_view concatenation_name(Concatenation c) {
  switch (c) {
    case Concatenation::Direct:
      return "direct";
    case Concatenation::Overlapped:
      return "overlapped";
    case Concatenation::ForwardDoubling:
      return "forward-doubling";
  }
  return "direct";
}

/// Reads and checks the shape; throws ScheduleConstraintError saying what would fit.
ChimeraShape chimera_shape(const GeneratorInput& in) {
  ChimeraShape shape;
  shape.devices = in.devices;
  shape.microbatches = in.microbatches;
  shape.pipelines =
      in.params.has("pipelines") ? static_cast<std::int32_t>(in.params.integer("pipelines")) : 1;
  shape.concatenation = parse_concatenation(
      in.params.has("concatenation") ? in.params.text("concatenation") : std::string("overlapped"));
  const std::int32_t d = shape.devices, n = shape.microbatches, f = shape.pipelines;
  if (d < 2 || d % 2 != 0) {
    throw ScheduleConstraintError(
        fmt::format("chimera needs an even number of devices (two pipelines in opposite "
                    "directions); got p = {}, use p = {}",
                    d, std::max(2, d + 1)));
  }
  if (f < 1 || (d / 2) % f != 0) {
    throw ScheduleConstraintError(
        fmt::format("chimera's pipelines f must divide p/2 = {} (each of the 2f pipelines carries "
                    "p/(2f) microbatches per unit); "
                    "got f = {}",
                    d / 2, f));
  }
  const std::int32_t unit = shape.unit_microbatches();
  if (n < unit || n % unit != 0) {
    throw ScheduleConstraintError(
        fmt::format("chimera with {} concatenation needs m to be a positive multiple of {} ({} per "
                    "basic unit); got m = {}, "
                    "use m = {}",
                    concatenation_name(shape.concatenation), unit,
                    shape.concatenation == Concatenation::ForwardDoubling ? "2p microbatches"
                                                                          : "p microbatches",
                    n, std::max(unit, (n + unit - 1) / unit * unit)));
  }
  return shape;
}

struct StepOp {
  std::int64_t step = 0;
  Op op;
};

Table generate_chimera(const GeneratorInput& in) {
  const ChimeraShape shape = chimera_shape(in);
  const std::int32_t d = shape.devices, f = shape.pipelines, n = shape.instance_size(),
                     k = shape.per_slot();

  Table t;
  t.devices = d;
  t.stages = d;
  t.microbatches = shape.microbatches;
  // Replica 2r is the down pipeline of rotation r (stage s on device s + rD/f), replica 2r+1 the up
  // pipeline (stage s on device D-1-s + rD/f). Weights are replicated: each device holds the stages
  // of every replica that maps one to it.
  for (std::int32_t r = 0; r < f; ++r) {
    const std::int32_t rotation = r * d / f;
    std::vector<std::int32_t> down(static_cast<std::size_t>(d)), up(static_cast<std::size_t>(d));
    for (std::int32_t s = 0; s < d; ++s) {
      down[static_cast<std::size_t>(s)] = (s + rotation) % d;
      up[static_cast<std::size_t>(s)] = (d - 1 - s + rotation) % d;
    }
    t.placement.device_of_stage.push_back(std::move(down));
    t.placement.device_of_stage.push_back(std::move(up));
  }
  t.placement.replica_of_microbatch.assign(static_cast<std::size_t>(shape.microbatches), 0);

  std::vector<std::vector<StepOp>> grid(static_cast<std::size_t>(d));
  // One instance: n slots in its direction; slot x carries microbatches first + k x + e, e < k,
  // at steps t0 + k (slot step) + e.
  auto emit_instance = [&](std::int64_t t0, std::int32_t replica, std::int32_t first) {
    const auto& map = t.placement.device_of_stage[static_cast<std::size_t>(replica)];
    for (std::int32_t x = 0; x < n; ++x) {
      for (std::int32_t e = 0; e < k; ++e) {
        const std::int32_t j = first + k * x + e;
        t.placement.replica_of_microbatch[static_cast<std::size_t>(j)] = replica;
        for (std::int32_t s = 0; s < d; ++s) {
          auto& ops = grid[static_cast<std::size_t>(map[static_cast<std::size_t>(s)])];
          ops.push_back({t0 + k * (2 * x + s) + e, Op::forward(s, j)});
          ops.push_back({t0 + k * (2 * x + 2 * d - 1 - s) + e, Op::backward(s, j)});
        }
      }
    }
  };
  const std::int64_t unit_shift = shape.concatenation == Concatenation::Overlapped
                                      ? 2 * static_cast<std::int64_t>(d)
                                      : k * shape.unit_slots();
  std::int32_t next_microbatch = 0;
  for (std::int64_t t0 = 0; next_microbatch < shape.microbatches; t0 += unit_shift) {
    for (std::int32_t r = 0; r < f; ++r) {
      for (std::int32_t direction = 0; direction < 2; ++direction) {
        emit_instance(t0, 2 * r + direction, next_microbatch);
        next_microbatch += k * n;
      }
    }
  }

  t.device_ops.resize(static_cast<std::size_t>(d));
  for (std::int32_t dev = 0; dev < d; ++dev) {
    auto& ops = grid[static_cast<std::size_t>(dev)];
    std::sort(ops.begin(), ops.end(),
              [](const StepOp& a, const StepOp& b) { return a.step < b.step; });
    for (std::size_t i = 1; i < ops.size(); ++i) {
      if (ops[i].step == ops[i - 1].step) {
        throw std::logic_error(
            fmt::format("chimera internal error: {} and {} both claim device {} at unit step {} (p "
                        "= {}, m = {}, f = {}, {})",
                        to_string(ops[i - 1].op), to_string(ops[i].op), dev, ops[i].step, d,
                        shape.microbatches, f, concatenation_name(shape.concatenation)));
      }
    }
    auto& out = t.device_ops[static_cast<std::size_t>(dev)];
    out.reserve(ops.size());
    for (const StepOp& s : ops) out.push_back(s.op);
  }
  return t;
}

Formula chimera_formula(const GeneratorInput& in) {
  const ChimeraShape shape = chimera_shape(in);
  const double d = shape.devices, n = shape.microbatches, f = shape.pipelines;
  // Makespan in unit steps with T_F = T_B (full backward), no communication.
  double steps = 0;
  switch (shape.concatenation) {
    case Concatenation::Direct:
      steps = (n / d) * (2 * d + d / f - 2);
      break;
    case Concatenation::Overlapped:
      steps = 2 * n + d / f - 2;
      break;
    case Concatenation::ForwardDoubling:
      steps = (n / (2 * d)) * (4 * d + d / f - 2);
      break;
  }
  Formula out;
  out.note = fmt::format(
      "{} concatenation, f = {}: {} unit steps at T_F = T_B (full) with no communication, bubble "
      "ratio 1 - 2m/steps "
      "(the paper's (p-2)/(2m+p-2) for m = p, f = 1; the {} form is {}); peak activation units {}",
      concatenation_name(shape.concatenation), shape.pipelines,
      shape.concatenation == Concatenation::Direct       ? "(m/p)(2p + p/f - 2)"
      : shape.concatenation == Concatenation::Overlapped ? "2m + p/f - 2"
                                                         : "(m/2p)(4p + p/f - 2)",
      concatenation_name(shape.concatenation),
      shape.concatenation == Concatenation::Overlapped && shape.pipelines == 1
          ? "the repository generator's and equals the paper's ratio for every m"
          : "bubblesim's derivation, checked by replay",
      shape.pipelines == 1
          ? fmt::format("{} at the end devices to {}", shape.per_slot() * (shape.devices / 2 + 1),
                        shape.per_slot() * shape.devices)
          : std::string("(f > 1: not published)"));
  const bool unit_costs =
      !in.costs.stages.empty() && has_uniform_stage_times(in.costs) &&
      in.costs.stages.front().forward == in.costs.stages.front().full_backward() &&
      in.delay == Time::zero();
  if (unit_costs) out.bubble_ratio = 1.0 - 2.0 * n / steps;
  if (shape.pipelines == 1) out.peak_activation_units = shape.per_slot() * shape.devices;
  return out;
}

}  // namespace

void register_chimera(Registrar& registrar) {
  std::vector<ParamSpec> params;
  params.push_back(
      choice_param("concatenation", "overlapped", {"direct", "overlapped", "forward-doubling"},
                   "how units of p microbatches follow each other when m > p: overlapped "
                   "(the default: the Chimera repository's generator, each pipeline "
                   "restarts 2p steps after the previous one), direct (append whole "
                   "units), forward-doubling "
                   "(units of 2p microbatches, two microbatches per slot)"));
  ParamSpec pipelines = integer_param(
      "pipelines", 1,
      "f: down pipelines (= up pipelines) per unit, rotated by p/f devices; must divide p/2", 1);
  params.push_back(std::move(pipelines));
  registrar.add(Generator{
      GeneratorInfo{
          "chimera",
          "two pipelines in opposite directions (down s -> s, up s -> p-1-s), weights replicated, "
          "microbatches split between directions; unit-step construction",
          "mirrored pair (f rotated pairs)",
          "Li & Hoefler, Chimera, SC'21 (arXiv 2107.06925); Shigangli/Chimera "
          "chimera_pipeline_rank.py",
          std::move(params)},
      generate_chimera, chimera_formula});
}

}  // namespace bubblesim
