#include "tools/report/html_iteration_tail.h"

#include <algorithm>

#include "tools/report/html_script_patch.h"

namespace bubblesim {
namespace {

constexpr const char* kView = "html_iteration_tail";

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

constexpr const char* kTailFunctions = R"JS(
  var TAILS = { sync: ['gradient sync exposed after the last op', '#b9b9b9'],
                step: ['optimizer step', '#6f6f6f'] };
  function drawTails(g, run, px) {
    run.tails.forEach(function (t) {
      var y = TOP + t[0] * (ROW + GAP);
      [['sync', t[1], t[2]], ['step', t[2], t[3]]].forEach(function (part) {
        if (part[2] <= part[1]) return;
        var x = px(part[1]), w = Math.max(px(part[2]) - x, 0.5);
        var r = el('rect', { x: x, y: y + 4, width: w, height: ROW - 8, fill: TAILS[part[0]][1], 'class': 'tail',
                             'data-tail': part[0] }, g);
        el('title', {}, r).textContent = TAILS[part[0]][0] + ' on ' + gpuName(t[0]) + ': ' +
                                         fmtMs(part[2] - part[1]) + ' (' + fmtMs(part[1]) + ' to ' + fmtMs(part[2]) + ')';
      });
    });
  }
)JS";

}  // namespace

nlohmann::json iteration_tails(const ScheduleRun& run) {
  nlohmann::json tails = nlohmann::json::array();
  const SyncMetrics& sync = run.simulation.metrics.sync;
  if (!sync.enabled) return tails;
  const auto& timings = run.simulation.timings;
  for (std::size_t d = 0; d < run.table.device_ops.size() && d < timings.size(); ++d) {
    Time last;
    const auto& ops = run.table.device_ops[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (stream_of(ops[i].kind) == Stream::Compute) last = std::max(last, timings[d][i].end);
    }
    const Time sync_end = d < sync.sync_end_per_device.size() ? sync.sync_end_per_device[d] : last;
    const Time step_end =
        d < sync.optimizer_end_per_device.size() ? sync.optimizer_end_per_device[d] : sync_end;
    if (sync_end <= last && step_end <= std::max(last, sync_end)) continue;
    const Time sync_shown = std::max(last, sync_end);
    tails.push_back({d, us(last), us(sync_shown), us(std::max(sync_shown, step_end))});
  }
  return tails;
}

std::string with_iteration_tails(std::string script) {
  patch_script(script, kView, "  var drawn = 0, tableOps = 0, aggregated = 0;\n",
               std::string(kTailFunctions) + "  var drawn = 0, tableOps = 0, aggregated = 0;\n");
  patch_script(script, kView, "    var base = TOP + run.devices * (ROW + GAP);\n",
               "    if (run.tails) drawTails(g, run, px);\n"
               "    var base = TOP + run.devices * (ROW + GAP);\n");
  patch_script(
      script, kView, "  document.getElementById('fit-each').addEventListener('change', drawAll);\n",
      legend_line_js("TAILS", "tail-legend", "after each device\\'s last op (thinner bars): ", "") +
          "  document.getElementById('fit-each').addEventListener('change', drawAll);\n");
  return script;
}

}  // namespace bubblesim
