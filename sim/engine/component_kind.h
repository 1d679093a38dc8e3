#pragma once
// ComponentKind: everything one behaviour of the replay declares about itself, in one place
// (the behaviour itself, an EngineComponent, is internal: engine_component.h). As an ns-3
// component declares its attributes and a SimGrid plugin attaches its own state to what it
// measures, a behaviour declares
//   - the scenario keys it reads (ComponentSetting: name, type, default, help and checker, as a
//     generator's ParamSpec), which the scenario reader accepts in their section and hands over
//     in EngineInput::behaviours, and a check across them;
//   - when an input engages it, which shortcuts of the replay (FastPath) it permits, and how it is
//     built for an event-loop replay;
//   - what it measured: its record in Metrics::components (component_results.h), the rows it adds
//     to the report's metric table and the report section they fill (metric_row.h), and the idle
//     time it causes that the idle split counts as point-to-point.
// The built-in behaviours are a CMake-generated list (BUBBLESIM_BUILTIN_COMPONENTS in
// sim/engine/CMakeLists.txt): a new behaviour is its folder under sim/engine/components/ and one
// line there. docs/engine.md, "Components", walks through one.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/parameter.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/metric_row.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

class EngineComponent;  // engine_component.h
struct ComponentSetup;  // engine_component.h

/// The shortcuts a replay may take instead of the event loop (docs/engine.md).
enum class FastPath : std::uint8_t {
  ListReplay,         // one iteration by list scheduling (list_replay.h)
  StreamReplay,       // the list replay of per-device order streams (stream_replay.h)
  ShiftedIterations,  // a later iteration as the first one shifted in time (Engine::run)
};
inline constexpr FastPath kFastPaths[] = {FastPath::ListReplay, FastPath::StreamReplay,
                                          FastPath::ShiftedIterations};
/// "list-replay", "stream-replay", "shifted-iterations" (the reports' names).
std::string_view fast_path_name(FastPath path);

/// One scenario key a behaviour reads. `spec.name` is the full key ("communication.p2p"): the
/// section reader of its first part accepts it (sim/scenario/sections/component_settings.h).
struct ComponentSetting {
  ParamSpec spec;
  /// Whether the resolved scenario in the JSON report lists it at its default too (a duration
  /// is written in seconds as NAME_s, a size in bytes as NAME_bytes).
  bool reported_at_default = false;
};

/// A problem with a combination of a behaviour's settings: the key to point at and why.
struct SettingProblem {
  std::string key;
  std::string message;
};

/// A registered behaviour.
struct ComponentKind {
  std::string_view name;  // for docs, tests and the reports ("send-hold")
  /// What it is, for a refused shortcut's message ("blocking sends").
  std::string_view description;
  /// Whether `in` asks for it. Only then does its answer below count, and is it built.
  bool (*engaged)(const EngineInput& in) = nullptr;
  /// Whether it permits `path` (a replay that never calls it gives its result).
  bool (*permits)(FastPath path) = nullptr;
  /// Builds it for one event-loop replay; null when this replay has no use for it (a network
  /// without links has no flow port).
  std::unique_ptr<EngineComponent> (*make)(const ComponentSetup& setup) = nullptr;
  /// The scenario keys it reads.
  std::vector<ComponentSetting> settings{};
  /// A problem with its keys together (each key's own range is its spec's check); null: none.
  std::optional<SettingProblem> (*check)(const ParamValues& settings) = nullptr;
  /// The rows it adds to the report's metric table, after the row named `rows_after` (a key of
  /// the simulation level, its own or another behaviour's; empty: at the end of the table, so
  /// that the CSV columns of the others stay where they are).
  std::vector<ResultRow> rows{};
  std::string_view rows_after{};
  /// The report section its rows' headings fill (empty name: none).
  ResultSection section{};
  /// Per device, compute idle it caused that no loop measure counts, which the idle split counts
  /// as point-to-point (docs/outputs.md "Idle time by cause"); null: none.
  std::vector<Time> (*p2p_idle)(const Metrics& simulation) = nullptr;
};

/// Every built-in behaviour, in the order the loop calls them (generated from
/// BUBBLESIM_BUILTIN_COMPONENTS).
std::span<const ComponentKind> builtin_components();

/// The behaviours a replay of `in` may use: EngineInput::behaviours.kinds, or the built-in ones.
std::span<const ComponentKind> components_of(const EngineInput& in);

/// The first behaviour that `in` engages and that does not permit `path`; null when every
/// engaged behaviour permits it. Every shortcut asks this one question.
const ComponentKind* refusing_component(FastPath path, const EngineInput& in);
/// Its description ("" when none), for messages.
std::string_view refusing_behaviour(FastPath path, const EngineInput& in);

/// The value of declared key `spec` in `settings`, or its default when the scenario left it out.
const ParamValue& setting_value(const ParamValues& settings, const ParamSpec& spec);

/// The behaviours a replay of `in` engages and the shortcuts they refused, for the reports.
ComponentUse component_use(const EngineInput& in);

}  // namespace bubblesim
