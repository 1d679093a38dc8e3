#include "schedules/plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>

#include "schedules/plugin_api.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw InputError(fmt::format("plugin {}: {}", path, why));
}

std::string last_dl_error() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown error");
}

// A C string from the info, or "" for null. Bounded so a garbage pointer in a broken plugin's
// data cannot make us scan forever (it can still fault; the ABI check above makes that unlikely).
std::string info_text(const char* s) {
  return s == nullptr ? std::string() : std::string(s, strnlen(s, 256));
}

}  // namespace

const LoadedPlugin& PluginSet::load(const std::string& path, Registry& registry) {
  std::error_code ec;
  if (!fs::exists(path, ec)) refuse(path, "no such file");
  if (!fs::is_regular_file(path, ec)) refuse(path, "not a regular file");
  const std::string canonical = fs::canonical(path, ec).string();
  for (const LoadedPlugin& p : loaded_) {
    if (!canonical.empty() && p.canonical_path == canonical) return p;
  }

  // dlopen searches the library path for a bare name; a path with a slash is taken as is.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    refuse(path, fmt::format("not a loadable shared library: {}", last_dl_error()));
  // From here on the handle is never closed (see plugin_loader.h).

  dlerror();
  void* symbol = dlsym(handle, BUBBLESIM_PLUGIN_ENTRY_POINT);
  if (symbol == nullptr) {
    refuse(path,
           fmt::format(
               "no entry point: the library does not export '{}' (define it with BUBBLESIM_PLUGIN "
               "from schedules/plugin_api.h)",
               BUBBLESIM_PLUGIN_ENTRY_POINT));
  }
  // POSIX guarantees that a dlsym result for a function converts to a function pointer.
  using InfoFunction = const BubblesimPluginInfo* (*)();
  auto entry = reinterpret_cast<InfoFunction>(symbol);
  const BubblesimPluginInfo* info = entry();
  if (info == nullptr)
    refuse(path, fmt::format("'{}' returned no plugin information", BUBBLESIM_PLUGIN_ENTRY_POINT));
  if (info->abi_version != BUBBLESIM_PLUGIN_ABI_VERSION) {
    refuse(path,
           fmt::format(
               "plugin ABI version {}, but this bubblesim loads ABI version {}; rebuild the plugin "
               "against bubblesim {}",
               info->abi_version, BUBBLESIM_PLUGIN_ABI_VERSION, BUBBLESIM_VERSION_STRING));
  }
  const std::string built_for = info_text(info->bubblesim_version);
  if (built_for != BUBBLESIM_VERSION_STRING) {
    refuse(path,
           fmt::format(
               "built against bubblesim '{}', but this is bubblesim {}; rebuild the plugin against "
               "this version's headers",
               built_for, BUBBLESIM_VERSION_STRING));
  }
  LoadedPlugin record;
  record.path = path;
  record.canonical_path = canonical;
  record.name = info_text(info->name);
  record.version = info_text(info->plugin_version);
  record.bubblesim_version = built_for;
  if (record.name.empty()) refuse(path, "the plugin information has no name");
  if (info->register_generators == nullptr)
    refuse(path, "the plugin information has no register_generators function");
  for (const LoadedPlugin& p : loaded_) {
    if (p.name == record.name) {
      refuse(path,
             fmt::format("a plugin named '{}' is already loaded from {}", record.name, p.path));
    }
  }

  const std::vector<std::string> before = registry.names();
  auto register_generators = info->register_generators;
  const std::string origin =
      fmt::format("plugin {} (version {})", path, record.version.empty() ? "?" : record.version);
  try {
    registry.add_from([&register_generators](Registrar& r) { register_generators(&r); }, origin);
  } catch (const std::exception& e) {
    refuse(path, fmt::format("registration failed: {}", e.what()));
  } catch (...) {
    refuse(path, "registration failed: it threw something that is not a std::exception");
  }
  for (const std::string& name : registry.names()) {
    if (std::find(before.begin(), before.end(), name) == before.end())
      record.generators.push_back(name);
  }
  if (record.generators.empty()) refuse(path, "the plugin registered no generator");
  loaded_.push_back(std::move(record));
  return loaded_.back();
}

void PluginSet::load_directories(const std::string& directories, Registry& registry) {
  std::size_t start = 0;
  while (start <= directories.size()) {
    std::size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    const std::string dir = directories.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      throw InputError(fmt::format("{}: '{}' is not a directory", kPluginPathVariable, dir));
    }
    std::vector<std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".so") files.push_back(entry.path().string());
    }
    if (ec)
      throw InputError(fmt::format("{}: cannot read directory '{}': {}", kPluginPathVariable, dir,
                                   ec.message()));
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) load(file, registry);
  }
}

}  // namespace bubblesim
