#pragma once
// PluginSet: loads schedule plugins (shared libraries exporting bubblesim_plugin_info, see
// plugin_api.h) into a Registry and keeps them loaded.
//
// Loading one file: dlopen (RTLD_NOW | RTLD_LOCAL, so an unresolved symbol fails here and not
// mid-run), look up the entry point, read the plain-data info, check the ABI version, then the
// bubblesim version, then the name; only then call the plugin's registration function, through
// Registry::add_from so a failing registration leaves the registry unchanged. Every failure is an
// InputError whose message starts with the file's path.
//
// Libraries are never unloaded: generators registered from a plugin (their std::function targets,
// parameter checks, strings) and any exception a plugin threw live in its code, and copies of them
// may outlive the registry. They stay mapped until the process exits.

#include <string>
#include <vector>

#include "schedules/registry.h"

namespace bubblesim {

struct LoadedPlugin {
  std::string path;            // as given
  std::string canonical_path;  // to recognise the same file named twice
  std::string name;
  std::string version;  // the plugin's own version
  std::string bubblesim_version;
  std::vector<std::string> generators;  // what it registered
};

class PluginSet {
 public:
  PluginSet() = default;
  PluginSet(const PluginSet&) = delete;
  PluginSet& operator=(const PluginSet&) = delete;
  PluginSet(PluginSet&&) = default;
  PluginSet& operator=(PluginSet&&) = default;
  ~PluginSet() = default;  // deliberately no dlclose (see above)

  /// Loads the plugin at `path` into `registry` and returns its record. Loading the same file a
  /// second time returns the first record. Throws InputError naming the file. The reference is
  /// valid until the next load.
  const LoadedPlugin& load(const std::string& path, Registry& registry);

  /// Loads every `*.so` file of each directory in the colon-separated `directories` (as in
  /// BUBBLESIM_PLUGIN_PATH), in sorted order per directory. Empty entries are skipped; a listed
  /// directory that does not exist is an InputError.
  void load_directories(const std::string& directories, Registry& registry);

  const std::vector<LoadedPlugin>& loaded() const { return loaded_; }

 private:
  std::vector<LoadedPlugin> loaded_;
};

/// The environment variable naming plugin directories.
inline constexpr const char* kPluginPathVariable = "BUBBLESIM_PLUGIN_PATH";

}  // namespace bubblesim
