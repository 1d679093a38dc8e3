#include "tools/report/html_moe_phases.h"

#include <algorithm>
#include <stdexcept>

#include "schedules/a2a_exposure.h"
#include "tools/report/html_script_patch.h"

namespace bubblesim {
namespace {

constexpr const char* kView = "html_moe_phases";

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

bool has_moe(const std::vector<StageCost>& costs) {
  return std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward + c.moe.a2a_backward + c.moe.experts.load.forward > Time::zero();
  });
}

/// The TP all-reduce time at the end of `op` (docs/parallelism.md), per table stage of a table
/// with `chunks` table stages per pipeline stage.
Time tp_time_of(const SyncCosts& sync, const Op& op, std::int64_t chunks) {
  auto at = [&](const std::vector<Time>& v, std::int32_t s) {
    const auto ps = static_cast<std::size_t>(s / chunks);
    return ps < v.size() ? Time::from_ps(v[ps].ps() / chunks) : Time::zero();
  };
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Recompute:
      return at(sync.tp_forward, op.stage);
    case OpKind::Backward:
      return at(sync.tp_backward, op.stage);
    case OpKind::ForwardBackward:
      return at(sync.tp_forward, op.stage) + at(sync.tp_backward, op.backward_stage);
    default:
      return Time::zero();
  }
}

// Drawn in the gap under each device's row (the gap grows from 6 to 22 px): the compute part
// (experts, slowed compute) at +2, the all-to-all (hidden, exposed) at +9, each 6 px high.
constexpr const char* kPhaseFunctions = R"JS(
  var PHASES = { e: ['routed experts', '#499894', 0], s: ['compute slowed by all-to-all SMs', '#f1ce63', 0],
                 h: ['all-to-all hidden under compute', '#c9b2d6', 1], x: ['all-to-all exposed', '#e15759', 1] };
  function drawPhases(g, run, px) {
    for (var d = 0; d < run.devices; d++) {
      var y = TOP + d * (ROW + GAP) + ROW + 2;
      el('rect', { x: LEFT, y: y, width: WIDTH, height: 13, fill: '#fbfbfb', 'class': 'phase-lane' }, g);
    }
    run.phases.forEach(function (p) {
      var kind = PHASES[p[1]], x = px(p[2]), w = Math.max(px(p[3]) - x, 0.5);
      var r = el('rect', { x: x, y: TOP + p[0] * (ROW + GAP) + ROW + 2 + 7 * kind[2], width: w, height: 6,
                           fill: kind[1], 'class': 'phase', 'data-phase': p[1] }, g);
      el('title', {}, r).textContent = kind[0] + ' ' + p[4] + ' on ' + gpuName(p[0]) + ': ' + fmtMs(p[3] - p[2]) +
                                       ' (' + fmtMs(p[2]) + ' to ' + fmtMs(p[3]) + ')';
    });
  }
  function drawExpertMemory(m, e, l, top, pw, py) {
    if (!e || e[0] <= 0) return;
    el('rect', { x: l, y: py(e[0]), width: pw, height: py(0) - py(e[0]), fill: PHASES.e[1], 'fill-opacity': 0.25,
                 'class': 'expert-static' }, m);
    el('text', { x: l, y: 25, fill: '#2f6663', 'class': 'expert-memory' }, m).textContent =
        'experts ' + fmtBytes(e[0]) + ' static, ' + fmtBytes(e[1]) + '/mb';
  }
)JS";

}  // namespace

nlohmann::json moe_phase_slices(const ResolvedScenario& resolved, const ScheduleRun& run,
                                double exact_until_us) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<StageCost>& costs = run.stage_costs;
  if (!has_moe(costs)) return out;
  const TableIndex index(run.table);
  const std::int64_t chunks = std::max(run.table.chunks, 1);
  for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
    if (d >= run.simulation.timings.size()) break;
    for (std::size_t i = 0; i < run.table.device_ops[d].size(); ++i) {
      const Op& op = run.table.device_ops[d][i];
      const OpTiming& t = run.simulation.timings[d][i];
      if (t.start.ps() < 0 || t.end.ps() < 0 || us(t.start) >= exact_until_us) continue;
      const bool split = backward_split(op, index);
      const std::string name = to_string(op);
      auto slice = [&](char kind, Time start, Time end) {
        if (end > start) out.push_back({d, std::string(1, kind), us(start), us(end), name});
      };
      // As the trace draws them: the experts from the op's start, the exposed all-to-all before
      // the op's TP all-reduce at its end and the slowed compute before that; the hidden
      // all-to-all from the op's start (it runs beside the compute, spread over the op).
      const OpExperts experts = op_experts(op, costs, split);
      slice('e', t.start, std::min(t.end, t.start + experts.load));
      const A2aOverlap a2a = op_a2a(op, costs, split);
      const Time tail = t.end - tp_time_of(resolved.sync, op, chunks);
      slice('s', tail - a2a.exposed - a2a.slowdown, tail - a2a.exposed);
      slice('h', t.start, std::min(t.end, t.start + a2a.hidden));
      slice('x', tail - a2a.exposed, tail);
    }
  }
  return out;
}

nlohmann::json expert_memory_per_device(const ScheduleRun& run) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<StageCost>& costs = run.stage_costs;
  if (!has_expert_memory(costs)) return out;
  const auto held = run.table.placement.stages_by_device(run.table.devices);
  for (std::int32_t d = 0; d < run.table.devices; ++d) {
    Bytes weights, kept;
    for (std::int32_t s : held[static_cast<std::size_t>(d)]) {
      if (static_cast<std::size_t>(s) >= costs.size()) continue;
      weights += costs[static_cast<std::size_t>(s)].moe.expert_static;
      kept += costs[static_cast<std::size_t>(s)].moe.expert_activation;
    }
    out.push_back({weights.count(), kept.count()});
  }
  return out;
}

std::string with_moe_phases(std::string script) {
  patch_script(script, kView, "ROW = 24, GAP = 6,", "ROW = 24, GAP = 22,");
  patch_script(script, kView, "  var drawn = 0, tableOps = 0, aggregated = 0;\n",
               std::string(kPhaseFunctions) + "  var drawn = 0, tableOps = 0, aggregated = 0;\n");
  patch_script(script, kView, "    var base = TOP + run.devices * (ROW + GAP);\n",
               "    if (run.phases) drawPhases(g, run, px);\n"
               "    var base = TOP + run.devices * (ROW + GAP);\n");
  // A second heading line in each memory chart for the experts' bytes.
  patch_script(script, kView, "var W = 300, H = 126, l = 56, top = 24,",
               "var W = 300, H = 138, l = 56, top = 36,");
  patch_script(script, kView, "      [[1, '#c7d7ea'], [2, '#2b5d8c']].forEach(",
               "      if (run.experts) drawExpertMemory(m, run.experts[dev], l, top, pw, py);\n"
               "      [[1, '#c7d7ea'], [2, '#2b5d8c']].forEach(");
  patch_script(script, kView,
               "  document.getElementById('fit-each').addEventListener('change', drawAll);\n",
               legend_line_js("PHASES", "phase-legend", "under each device (MoE): ",
                              "(upper: compute, lower: all-to-all; memory: the experts\\' "
                              "static band)") +
                   "  document.getElementById('fit-each').addEventListener('change', drawAll);\n");
  return script;
}

}  // namespace bubblesim
