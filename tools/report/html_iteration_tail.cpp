#include "tools/report/html_iteration_tail.h"

#include <algorithm>

#include "sim/engine/metrics.h"
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
  const std::vector<DeviceTimes> devices = device_times(run.table, run.simulation.timings);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (d >= sync.sync_end_per_device.size() || d >= sync.optimizer_end_per_device.size()) break;
    const Time last = devices[d].last;
    const Time sync_end = std::max(last, sync.sync_end_per_device[d]);
    const Time step_end = std::max(sync_end, sync.optimizer_end_per_device[d]);
    if (step_end > last) tails.push_back({d, us(last), us(sync_end), us(step_end)});
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
