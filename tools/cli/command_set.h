#pragma once
// CommandSet: the CLI's subcommands. Each command file (tools/cli/NAME_command.cpp) contributes
// one `add_*` function that declares its CLI11 subcommand and the action to run when it is
// chosen; main lists those functions and dispatches. Commands format nothing themselves: the text
// they print comes from sim/report. Actions return the exit code (0 ok, 1 simulated failure, 2
// bad input) and throw InputError for bad input.

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

// One file per command (NAME_command.cpp), each defining its add function; main calls them all.
void add_run_commands(CLI::App& app, CommandSet& commands);          // run, compare (one command)
void add_table_command(CLI::App& app, CommandSet& commands);         // table
void add_list_command(CLI::App& app, CommandSet& commands);          // list
void add_explain_command(CLI::App& app, CommandSet& commands);       // explain
void add_validate_command(CLI::App& app, CommandSet& commands);      // validate
void add_sweep_commands(CLI::App& app, CommandSet& commands);        // sweep, merge (its shards)
void add_regress_commands(CLI::App& app, CommandSet& commands);      // regress
void add_check_plugin_command(CLI::App& app, CommandSet& commands);  // check-plugin
void add_calibrate_commands(CLI::App& app, CommandSet& commands);    // calibrate
void add_plan_command(CLI::App& app, CommandSet& commands);          // plan

}  // namespace bubblesim
