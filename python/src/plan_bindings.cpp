// bubblesim._core: `bubblesim plan` from Python (bubblesim.plan, python/bubblesim/_plan.py): the
// same search (sim/plan/plan.h) with the GIL released, and every report the CLI writes rendered by
// the same C++ writers.
#include <pybind11/stl.h>

#include "python/src/core.h"
#include "sim/plan/plan.h"
#include "sim/plan/plan_report.h"

namespace bubblesim::python {
namespace {

struct PlanOutput {
  std::string json, text, markdown, csv, html;
};

PlanOutput plan(const std::string& text, const std::string& name, const std::string& base_dir,
                std::int64_t replays, std::int64_t per_layout, double time_budget, int jobs) {
  const PlanSpec spec = load_plan_string(text, name, base_dir);
  PlanOptions options;
  options.replays = replays;
  options.per_family = per_layout;
  options.time_budget_s = time_budget;
  options.jobs = jobs;
  const std::shared_ptr<const Registry> reg = registry();
  const PlanResult result = run_plan(spec, *reg, options);
  return {plan_report_json(result).dump(), plan_report_text(result, 100),
          plan_report_markdown(result), plan_report_csv(result), plan_report_html(result)};
}

}  // namespace

void bind_plans(py::module_& m) {
  py::class_<PlanOutput>(m, "_PlanOutput")
      .def_readonly("json", &PlanOutput::json)
      .def_readonly("text", &PlanOutput::text)
      .def_readonly("markdown", &PlanOutput::markdown)
      .def_readonly("csv", &PlanOutput::csv)
      .def_readonly("html", &PlanOutput::html);
  m.def(
      "_plan",
      [](const std::string& text, const std::string& name, const std::string& base_dir,
         std::int64_t replays, std::int64_t per_layout, double time_budget, int jobs) {
        try {
          py::gil_scoped_release release;
          return plan(text, name, base_dir, replays, per_layout, time_budget, jobs);
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("text"), py::arg("name"), py::arg("base_dir"), py::arg("replays"),
      py::arg("per_layout"), py::arg("time_budget"), py::arg("jobs"));
  m.def(
      "_plan_flags_yaml",
      [](const std::string& model, const std::string& gpu, std::int64_t nodes,
         std::int64_t gpus_per_node, const std::string& topology, std::int64_t global_batch,
         std::int64_t seq_len) {
        try {
          PlanFlags f{model, gpu, topology, nodes, gpus_per_node, global_batch, seq_len};
          return plan_from_flags(f).text;
        } catch (const InputError& e) {
          raise_input_error(e);
        }
      },
      py::arg("model"), py::arg("gpu"), py::arg("nodes"), py::arg("gpus_per_node"),
      py::arg("topology"), py::arg("global_batch"), py::arg("seq_len"));
}

}  // namespace bubblesim::python
