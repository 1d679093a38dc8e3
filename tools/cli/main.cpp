// bubblesim: the command-line tool. Declares the subcommands (each command file adds its own),
// parses, and is the only place that turns errors into exit codes: 0 ok, 1 simulated failure
// (out of memory, deadlock, infeasible), 2 bad input, 3 internal error.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>

#include "schedules/builtin_generators.h"
#include "sim/report/text_table.h"
#include "sim/runner/schedule_run.h"
#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace {

/// Loads the plugins of BUBBLESIM_PLUGIN_PATH, then those named with --plugin, into the
/// context's registry. Throws InputError naming the file that could not be loaded.
void load_plugins(bubblesim::CommandContext& context) {
  if (const char* dirs = std::getenv(bubblesim::kPluginPathVariable); dirs != nullptr) {
    context.plugins.load_directories(dirs, context.registry);
  }
  for (const std::string& path : context.plugin_paths) context.plugins.load(path, context.registry);
}

/// CLI11's help, its lines broken to the terminal's width (COLUMNS, default 100).
class FittedFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    return bubblesim::fit_lines(CLI::Formatter::make_help(app, std::move(name), mode),
                                bubblesim::text_width());
  }
};

/// An error message for stderr: on a terminal, or when COLUMNS is set, each line broken to the
/// width; else (a pipe, a log a tool reads) one line per diagnostic, as the tests and CI read it.
std::string fitted_error(const std::string& message) {
  if (isatty(STDERR_FILENO) == 0 && std::getenv("COLUMNS") == nullptr) return message;
  return bubblesim::fit_lines(message, bubblesim::text_width());
}

/// The first word on the command line that is not an option (nor --plugin's value): the command
/// the user meant, or "" when there is none.
std::string command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plugin") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] != '-') return a;
  }
  return "";
}

/// "unknown command 'plna'; did you mean 'plan'? (commands: run, compare, ...)" when the command
/// word names no subcommand, else "".
std::string unknown_command(const CLI::App& app, const std::string& word) {
  if (word.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  const std::string hint = bubblesim::closest_match(word, names);
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return "error: unknown command '" + word + "'" +
         (hint.empty() ? "" : "; did you mean '" + hint + "'?") + " (commands: " + list +
         "; bubblesim --help describes them)";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bubblesim;
  CLI::App app{"bubblesim: simulate pipeline-parallel training schedules on modeled clusters"};
  app.set_version_flag("--version", std::string("bubblesim ") + BUBBLESIM_VERSION);
  app.require_subcommand(1);
  // Before the subcommands are added: each copies its parent's formatter.
  app.formatter(std::make_shared<FittedFormatter>());

  CommandContext context;
  CommandSet commands;
  app.add_option("--plugin", context.plugin_paths, "load a schedule plugin (.so file); repeatable")
      ->type_name("PATH");
  app.add_flag("-q,--quiet", context.quiet, "do not list the files written on stderr");
  app.fallthrough();  // so --plugin and -q may also follow the subcommand
  add_run_commands(app, commands);
  add_table_command(app, commands);
  add_list_command(app, commands);
  add_explain_command(app, commands);
  add_validate_command(app, commands);
  add_sweep_commands(app, commands);
  add_regress_commands(app, commands);
  add_check_plugin_command(app, commands);
  add_calibrate_commands(app, commands);
  add_plan_command(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A misspelled command: say which one was meant instead of CLI11's "A subcommand is required".
    const std::string unknown = unknown_command(app, command_word(argc, argv));
    if (!unknown.empty() && e.get_exit_code() != 0) {
      fmt::print(stderr, "{}\n", fitted_error(unknown));
      return 2;
    }
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    context.registry = builtin_registry();
    load_plugins(context);
    return commands.dispatch(context);
  } catch (const InfeasibleScheduleError& e) {
    // An outcome, not bad input: the schedule cannot be generated within its constraints.
    fmt::print(stderr, "{}\n", fitted_error(e.what()));
    return 1;
  } catch (const InputError& e) {
    fmt::print(stderr, "{}\n", fitted_error(e.what()));
    return 2;
  } catch (const OverflowError& e) {
    fmt::print(stderr, "error: {} (the simulated time or memory does not fit in 64 bits)\n",
               e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 3;
  }
}
