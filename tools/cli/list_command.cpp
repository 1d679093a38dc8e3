// `bubblesim list`: the known schedules, built-in and from plugins; `--presets`: the model, GPU and
// framework presets (docs/models.md) with their values and sources; `--metrics`: every metric of
// the reports; `--plot-metrics`: the sweep plot's columns.
#include <memory>

#include "sim/costmodel/presets.h"
#include "sim/report/catalog_report.h"
#include "sim/report/sweep_plot.h"
#include "sim/report/text_table.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {

void add_list_command(CLI::App& app, CommandSet& commands) {
  CLI::App* list = app.add_subcommand("list", "list the known schedules (built-in and plugins)");
  auto presets = std::make_shared<bool>(false);
  auto metrics = std::make_shared<bool>(false);
  auto plot_metrics = std::make_shared<bool>(false);
  list->add_flag("--presets", *presets,
                 "list the model, GPU and framework presets (model.preset, cluster.gpu.preset, "
                 "model.framework) instead");
  list->add_flag("--metrics", *metrics,
                 "list every metric of the reports instead: name, unit, which way is better, "
                 "its sweep-plot column, what it measures");
  list->add_flag("--plot-metrics", *plot_metrics,
                 "list the CSV columns `sweep --html --plot-metric` takes, one per line");
  commands.add(list, [presets, metrics, plot_metrics](CommandContext& context) {
    if (*presets) {
      emit("", fit_lines(presets_text(), text_width()));
      return 0;
    }
    if (*metrics) {
      emit("", metric_list_text(text_width()));
      return 0;
    }
    if (*plot_metrics) {
      std::string lines;
      for (const std::string& m : sweep_plot_metrics()) lines += m + "\n";
      emit("", lines);
      return 0;
    }
    emit("", schedule_list_text(context.registry, text_width()));
    return 0;
  });
}

}  // namespace bubblesim
