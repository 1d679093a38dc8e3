#pragma once
// CommandSet: the CLI's subcommands. Each command file contributes one `add_*_commands` function
// that declares its CLI11 subcommands and the action to run when one is chosen; main lists those
// functions and dispatches. Actions return the exit code (0 ok, 1 simulated failure, 2 bad input)
// and throw InputError for bad input.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "schedules/plugin_loader.h"
#include "schedules/registry.h"

namespace bubblesim {

/// What every command may use. Plugins named on the command line are loaded into `registry`
/// before the action runs.
struct CommandContext {
  PluginSet plugins;  // declared first: the libraries outlive the registry's generators
  Registry registry;
  std::vector<std::string> plugin_paths;  // --plugin, in command-line order
  bool quiet = false;                     // -q: no "wrote FILE" lines on stderr
};

/// Says on stderr that a command wrote `path` ("wrote out/report.html (HTML report)"), unless
/// `quiet`. Every command that writes files calls it once per file.
void say_written(bool quiet, const std::string& path, const std::string& what);

class CommandSet {
 public:
  using Action = std::function<int(CommandContext&)>;
  void add(CLI::App* subcommand, Action action) {
    commands_.emplace_back(subcommand, std::move(action));
  }
  /// Runs the action of the parsed subcommand; -1 when none was chosen.
  int dispatch(CommandContext& context) const {
    for (const auto& [app, action] : commands_) {
      if (app->parsed()) return action(context);
    }
    return -1;
  }

 private:
  std::vector<std::pair<CLI::App*, Action>> commands_;
};

void add_run_commands(CLI::App& app, CommandSet& commands);        // run, compare
void add_table_command(CLI::App& app, CommandSet& commands);       // table
void add_catalog_commands(CLI::App& app, CommandSet& commands);    // list, explain, validate
void add_sweep_commands(CLI::App& app, CommandSet& commands);      // sweep, merge
void add_regress_commands(CLI::App& app, CommandSet& commands);    // regress
void add_plugin_commands(CLI::App& app, CommandSet& commands);     // check-plugin
void add_calibrate_commands(CLI::App& app, CommandSet& commands);  // calibrate

/// Loads the plugins of BUBBLESIM_PLUGIN_PATH, then those named with --plugin, into the
/// context's registry. Throws InputError naming the file that could not be loaded.
void load_plugins(CommandContext& context);

}  // namespace bubblesim
