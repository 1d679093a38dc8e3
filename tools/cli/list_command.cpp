// `bubblesim list`: the known schedules, built-in and from plugins.
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"
#include "tools/report/catalog_report.h"

namespace bubblesim {

void add_list_command(CLI::App& app, CommandSet& commands) {
  CLI::App* list = app.add_subcommand("list", "list the known schedules (built-in and plugins)");
  commands.add(list, [](CommandContext& context) {
    emit("", schedule_list_text(context.registry, text_width()));
    return 0;
  });
}

}  // namespace bubblesim
