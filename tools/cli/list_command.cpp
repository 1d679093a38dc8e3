// `bubblesim list`: the known schedules, built-in and from plugins; `--presets`: the model, GPU and
// framework presets (docs/models.md) with their values and sources.
#include <memory>

#include "sim/costmodel/presets.h"
#include "sim/report/catalog_report.h"
#include "sim/report/text_table.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {

void add_list_command(CLI::App& app, CommandSet& commands) {
  CLI::App* list = app.add_subcommand("list", "list the known schedules (built-in and plugins)");
  auto presets = std::make_shared<bool>(false);
  list->add_flag("--presets", *presets,
                 "list the model, GPU and framework presets (model.preset, cluster.gpu.preset, "
                 "model.framework) instead");
  commands.add(list, [presets](CommandContext& context) {
    if (*presets) {
      emit("", fit_lines(presets_text(), text_width()));
      return 0;
    }
    emit("", schedule_list_text(context.registry, text_width()));
    return 0;
  });
}

}  // namespace bubblesim
