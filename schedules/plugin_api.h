#pragma once
// The plugin API: everything a schedule plugin needs, in one header.
//
// A plugin is a shared library (a CMake MODULE) that registers generators exactly like the
// built-ins: one function `void register_my_schedules(bubblesim::Registrar&)` that calls
// `registrar.add(Generator{...})`. It exports one C entry point, `bubblesim_plugin_info`, which
// returns plain constant data. The host reads that data and checks the ABI and bubblesim versions
// before it calls any C++ code of the plugin; only then does it call `register_generators`.
//
//   #include "schedules/plugin_api.h"
//   namespace { void register_mine(bubblesim::Registrar& r) { r.add(...); } }
//   BUBBLESIM_PLUGIN("my-schedules", "1.0", register_mine)
//
// The host keeps the library loaded until it exits, so generators may refer to anything in it.
// Registration may throw (e.g. std::invalid_argument for a bad generator); the host then removes
// whatever the plugin had registered and reports the error with the plugin's file name.

#include <cstdint>

#include "schedules/generator.h"    // Generator, GeneratorInfo, GeneratorInput, Formula, Registrar
#include "schedules/op.h"           // Op, OpKind
#include "schedules/parameter.h"    // ParamSpec, ParamValues, integer_param, choice_param, ...
#include "schedules/stage_costs.h"  // StageCost, CostProfile
#include "schedules/table.h"        // Table, Placement
#include "schedules/version.h"      // BUBBLESIM_VERSION_STRING

/// Layout version of BubblesimPluginInfo, of the calling convention of register_generators and of
/// the types a generator receives and returns (GeneratorInput, Table, Formula, ...). Bumped
/// whenever any of them changes; a plugin with another value is refused before any call into it.
///   1  first release
///   2  GeneratorInput: `comm_delay` renamed `delay` (communication.delay); `memory_budget` is
///      one value per device (std::vector<Bytes>, empty = no budget) instead of one optional
///   3  Generator: `stream` (an optional per-device order stream, schedules/order_stream.h)
///   4  GeneratorInput: `release` (memory.release, for generators that plan under the budget)
#define BUBBLESIM_PLUGIN_ABI_VERSION 4u

extern "C" {

/// What a plugin's entry point returns. Plain constant data: reading it runs no plugin code.
struct BubblesimPluginInfo {
  std::uint32_t abi_version;      // BUBBLESIM_PLUGIN_ABI_VERSION the plugin was built with
  const char* bubblesim_version;  // BUBBLESIM_VERSION_STRING the plugin was built against
  const char* name;               // the plugin's name, e.g. "1f1b-warmup"
  const char* plugin_version;     // the plugin's own version, shown by `list` and `explain`
  /// Registers the plugin's generators with the host's registrar. Called only after the checks.
  void (*register_generators)(bubblesim::Registrar* registrar);
};

/// The entry point every plugin exports (use BUBBLESIM_PLUGIN to define it).
const BubblesimPluginInfo* bubblesim_plugin_info(void);

}  // extern "C"

/// The symbol the host looks up.
#define BUBBLESIM_PLUGIN_ENTRY_POINT "bubblesim_plugin_info"

/// Defines the entry point of a plugin whose generators are registered by
/// `void REGISTER_FUNCTION(bubblesim::Registrar&)` (the same shape as the built-ins). NAME and
/// VERSION are string literals.
#define BUBBLESIM_PLUGIN(NAME, VERSION, REGISTER_FUNCTION)                             \
  namespace {                                                                          \
  void bubblesim_plugin_register_trampoline(bubblesim::Registrar* registrar) {         \
    REGISTER_FUNCTION(*registrar);                                                     \
  }                                                                                    \
  }                                                                                    \
  extern "C" __attribute__((visibility("default"))) const BubblesimPluginInfo*         \
  bubblesim_plugin_info(void) {                                                        \
    static constexpr BubblesimPluginInfo info{BUBBLESIM_PLUGIN_ABI_VERSION,            \
                                              BUBBLESIM_VERSION_STRING, NAME, VERSION, \
                                              &bubblesim_plugin_register_trampoline};  \
    return &info;                                                                      \
  }
