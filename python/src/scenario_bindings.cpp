// bubblesim._core: scenarios loaded from a file or YAML text, runs with the GIL released, and the
// reports the CLI writes (JSON, text, HTML) rendered from the same C++ writers, so Python sees
// exactly the numbers of `bubblesim run --format json`. Presets as YAML text.
#include <fmt/format.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <memory>

#include "python/src/core.h"
#include "sim/costmodel/presets.h"
#include "sim/engine/memory_timeline.h"
#include "sim/report/html_report.h"
#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/overflow_error.h"

namespace bubblesim::python {
namespace {

using ScenarioPtr = std::shared_ptr<Scenario>;

/// What one run gives Python: the JSON report's text and the HTML page when asked for; the text
/// report and the tables are rendered from the kept run when asked for.
struct RunOutput {
  std::string json;
  std::string html;
  bool failed = false;  // a schedule ran out of memory, deadlocked or was infeasible
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const ScenarioRun> result;
  std::string baseline;

  std::string text() const {
    ReportOptions options;
    options.baseline = baseline;
    return scenario_report_text(*scenario, *result, options);
  }
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const ScheduleRun& r : result->runs) out.push_back(r.label);
    return out;
  }
  /// Per op of run `index` (simulation or idealized table level): device, kind letter, stage,
  /// microbatch, start and end in seconds; empty for a streamed replay (no per-op timings).
  std::vector<std::tuple<int, std::string, int, int, double, double>> timeline(std::size_t index,
                                                                               bool ideal) const {
    const ScheduleRun& run = result->runs.at(index);
    const SimulationResult& sim = ideal ? run.ideal : run.simulation;
    std::vector<std::tuple<int, std::string, int, int, double, double>> out;
    for (std::size_t d = 0; d < sim.timings.size() && d < run.table.device_ops.size(); ++d) {
      const std::vector<Op>& ops = run.table.device_ops[d];
      const auto times = sim.timings[d];
      for (std::size_t i = 0; i < ops.size() && i < times.size(); ++i) {
        out.emplace_back(static_cast<int>(d), std::string(1, op_kind_letter(ops[i].kind)),
                         ops[i].stage, ops[i].microbatch, times[i].start.seconds(),
                         times[i].end.seconds());
      }
    }
    return out;
  }
  std::vector<Table> tables() const {
    std::vector<Table> out;
    for (const ScheduleRun& r : result->runs) out.push_back(r.table);
    return out;
  }
};

/// The `only` names that the scenario does not list are added with their defaults, as
/// `bubblesim run --schedule NAME` does.
void add_named_schedules(Scenario& scenario, const std::vector<std::string>& only,
                         const Registry& registry) {
  for (const std::string& name : only) {
    const Generator* generator = registry.find(name);
    if (generator == nullptr) throw InputError("schedules: " + registry.unknown_name_message(name));
    const bool listed = std::any_of(scenario.schedules.begin(), scenario.schedules.end(),
                                    [&](const ScheduleRequest& r) { return r.name == name; });
    if (listed) continue;
    ScheduleRequest request;
    request.name = name;
    request.params = ParamValues::defaults(generator->info.params);
    request.where = SourceLocation{scenario.labels.file, 0, 0};
    scenario.schedules.push_back(request);
  }
}

RunOutput run(const Scenario& base, const std::vector<std::string>& only,
              const std::string& baseline, bool html, std::size_t html_max_ops,
              std::int64_t max_ops, int threads, const std::string& stream,
              const std::string& symmetry) {
  Scenario scenario = base;
  scenario.command_line.symmetry = symmetry != "off";
  scenario.command_line.max_ops = max_ops;
  scenario.command_line.threads = threads;
  scenario.command_line.stream = stream == "on"    ? StreamMode::On
                                 : stream == "off" ? StreamMode::Off
                                                   : StreamMode::Auto;
  const std::shared_ptr<const Registry> registry = python::registry();
  add_named_schedules(scenario, only, *registry);
  // The HTML report draws memory over time: one timeline per run, as `bubblesim run --html`.
  std::vector<std::unique_ptr<MemoryTimeline>> memory;
  std::vector<std::unique_ptr<CommLaneRecorder>> lanes;  // the communication lanes
  ScenarioRunHooks hooks;
  if (html) {
    hooks.observers = [&](std::size_t index) {
      if (memory.size() <= index) memory.resize(index + 1);
      if (lanes.size() <= index) lanes.resize(index + 1);
      memory[index] = std::make_unique<MemoryTimeline>(scenario.stages);
      if (scenario.communication.kind != CommunicationKind::Topology)
        return std::vector<EngineObserver*>{memory[index].get()};
      lanes[index] = std::make_unique<CommLaneRecorder>(3 * html_max_ops + 1000);
      return std::vector<EngineObserver*>{memory[index].get(), lanes[index].get()};
    };
  }
  RunOutput out;
  auto kept = std::make_shared<ScenarioRun>();
  ScenarioRun& result = *kept;
  try {
    result = run_scenario(scenario, *registry, only, hooks);
  } catch (const OverflowError& e) {
    throw InputError(fmt::format("{}: {}", scenario.labels.file, e.what()));
  }
  ReportOptions options;
  options.baseline = baseline;
  out.json = scenario_report_json(scenario, result, options).dump();
  if (html) {
    std::vector<const MemoryTimeline*> timelines;
    std::vector<const CommLaneRecorder*> recorded;
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      timelines.push_back(memory[i].get());
      recorded.push_back(lanes[i].get());
    }
    out.html = render_html_report(scenario, result, timelines, baseline, html_max_ops, recorded);
  }
  out.failed = !result.infeasible.empty();
  for (const ScheduleRun& r : result.runs)
    out.failed = out.failed || r.simulation.status != RunStatus::Ok;
  out.baseline = baseline;
  out.result = std::move(kept);
  out.scenario = std::make_shared<const Scenario>(std::move(scenario));
  return out;
}

/// The table of schedule `name` for `scenario`, as `bubblesim table` generates it: with the
/// scenario's parameters for it when it lists it, else its defaults.
Table generate(const Scenario& scenario, const std::string& name) {
  const std::shared_ptr<const Registry> registry = python::registry();
  const Generator* generator = registry->find(name);
  if (generator == nullptr) throw InputError("schedule: " + registry->unknown_name_message(name));
  ScheduleRequest request;
  request.name = name;
  request.where = SourceLocation{scenario.labels.file, 0, 0};
  request.params = ParamValues::defaults(generator->info.params);
  for (const ScheduleRequest& r : scenario.schedules) {
    if (r.name == name) {
      request = r;
      break;
    }
  }
  return generate_table(resolve(scenario), *generator, request);
}

/// A YAML node as YAML text (the package parses it with PyYAML).
std::string yaml_text(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

}  // namespace

void bind_scenarios(py::module_& m) {
  py::class_<Scenario, ScenarioPtr>(m, "Scenario",
                                    "A validated scenario (load it with bubblesim.load).")
      .def_property_readonly(
          "name", [](const Scenario& s) { return s.labels.name; }, "The scenario's name: key.")
      .def_property_readonly(
          "file", [](const Scenario& s) { return s.labels.file; }, "The file it was loaded from.")
      .def_property_readonly(
          "stages", [](const Scenario& s) { return s.stages; }, "p: pipeline stages (devices).")
      .def_property_readonly(
          "microbatches", [](const Scenario& s) { return s.microbatches; }, "m: microbatches.")
      .def_property_readonly(
          "schedules",
          [](const Scenario& s) {
            std::vector<std::string> names;
            for (const ScheduleRequest& r : s.schedules) names.push_back(r.name);
            return names;
          },
          "The generator names of its schedules: entries, in order.")
      .def("__repr__", [](const Scenario& s) {
        return fmt::format("<bubblesim.Scenario '{}' p={} m={} schedules={}>", s.labels.name,
                           s.stages, s.microbatches, s.schedules.size());
      });

  m.def(
      "_load_file",
      [](const std::string& path) {
        try {
          return std::make_shared<Scenario>(load_scenario_file(path, *registry()));
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("path"));
  m.def(
      "_load_string",
      [](const std::string& yaml, const std::string& name, const std::string& base_dir) {
        try {
          return std::make_shared<Scenario>(
              load_scenario_string(yaml, name, base_dir, *registry()));
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("yaml"), py::arg("name"), py::arg("base_dir"));

  py::class_<RunOutput>(m, "_RunOutput")
      .def_readonly("json", &RunOutput::json)
      .def_readonly("html", &RunOutput::html)
      .def_readonly("failed", &RunOutput::failed)
      .def("text", &RunOutput::text)
      .def("labels", &RunOutput::labels)
      .def("tables", &RunOutput::tables)
      .def("timeline", &RunOutput::timeline, py::arg("index"), py::arg("ideal"));
  m.def(
      "_run",
      [](const ScenarioPtr& scenario, const std::vector<std::string>& only,
         const std::string& baseline, bool html, std::size_t html_max_ops, std::int64_t max_ops,
         int threads, const std::string& stream, const std::string& symmetry) {
        try {
          py::gil_scoped_release release;  // the engine runs without the GIL
          return run(*scenario, only, baseline, html, html_max_ops, max_ops, threads, stream,
                     symmetry);
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("scenario"), py::arg("only"), py::arg("baseline"), py::arg("html"),
      py::arg("html_max_ops"), py::arg("max_ops"), py::arg("threads"), py::arg("stream"),
      py::arg("symmetry"));

  m.def(
      "_generate",
      [](const ScenarioPtr& scenario, const std::string& name) {
        try {
          py::gil_scoped_release release;
          return generate(*scenario, name);
        } catch (const InputError& e) {
          raise_input_error(e);
        } catch (const InfeasibleScheduleError& e) {
          PyErr_SetString(
              py::module_::import("bubblesim._core").attr("ScheduleConstraintError").ptr(),
              e.what());
          throw py::error_already_set();
        }
      },
      py::arg("scenario"), py::arg("name"));

  m.def("_preset_names", [](const std::string& kind) {
    const Presets& p = Presets::builtin();
    return kind == "model" ? p.model_names() : kind == "gpu" ? p.gpu_names() : p.framework_names();
  });
  m.def("_preset_yaml", [](const std::string& kind, const std::string& name) -> py::object {
    const Presets& p = Presets::builtin();
    std::optional<YamlNode> node = kind == "model" ? p.model(name)
                                   : kind == "gpu" ? p.gpu(name)
                                                   : p.framework(name);
    if (!node) return py::none();
    return py::str(yaml_text(node->raw()));
  });
  m.def("_presets_text", &presets_text);
}

}  // namespace bubblesim::python
