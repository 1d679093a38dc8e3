// bubblesim._core: schedule generators written in Python. A Python function from a
// GeneratorInput (pipeline shape, parameters, costs) to a Table registers under a name and is then
// a generator like the built-ins: scenarios name it, the runner calls it (taking the GIL for the
// call only), and the generator contract (sim/runner/generator_contract.h) checks it. Its errors
// name it; raising bubblesim.ScheduleConstraintError makes the schedule `infeasible`.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <type_traits>
#include <variant>

#include "python/src/core.h"
#include "schedules/builtin_generators.h"
#include "sim/runner/generator_contract.h"

namespace bubblesim::python {
namespace {

struct PythonGenerator {
  GeneratorInfo info;
  std::string origin;  // "python: module.function"
  py::object generate, formula;
};

// The Python generators in registration order and the registry built from them; both replaced,
// never edited, so a run that holds a snapshot is not disturbed by a registration.
std::mutex state_mutex;
std::vector<std::shared_ptr<PythonGenerator>>* python_generators = nullptr;  // leaked at exit
std::shared_ptr<const Registry> current;

py::object constraint_error_type() {
  return py::module_::import("bubblesim._core").attr("ScheduleConstraintError");
}

py::object param_to_python(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Time>)
          return py::float_(v.seconds());
        else if constexpr (std::is_same_v<T, Bytes>)
          return py::int_(v.count());
        else
          return py::cast(v);
      },
      value);
}

py::dict stage_cost_dict(const StageCost& c) {
  py::dict d;
  d["forward_s"] = c.forward.seconds();
  d["backward_input_s"] = c.backward_input.seconds();
  d["backward_weight_s"] = c.backward_weight.seconds();
  d["recompute_s"] = c.recompute.seconds();
  d["backward_recompute_s"] = c.backward_recompute.time.seconds();
  d["recompute_unit_bytes"] = c.backward_recompute.unit.count();
  d["activation_bytes"] = c.activation.count();
  d["weight_grad_bytes"] = c.weight_grad.count();
  d["p2p_bytes"] = c.p2p.count();
  d["static_memory_bytes"] = c.static_memory.count();
  return d;
}

/// What the Python function receives: a bubblesim.GeneratorInput (types.SimpleNamespace-like).
py::object input_object(const GeneratorInput& in) {
  py::dict params;
  for (const auto& [name, value] : in.params.all()) params[py::str(name)] = param_to_python(value);
  py::list costs, budget;
  for (const StageCost& c : in.costs.stages) costs.append(stage_cost_dict(c));
  for (Bytes b : in.memory_budget) budget.append(b.count());
  py::object ns = py::module_::import("bubblesim._generators").attr("GeneratorInput");
  return ns(py::arg("devices") = in.devices, py::arg("microbatches") = in.microbatches,
            py::arg("params") = params, py::arg("costs") = costs,
            py::arg("delay_s") = in.delay.seconds(), py::arg("memory_budget") = budget,
            py::arg("base_dir") = in.base_dir);
}

/// A Python exception that is not an Exception (KeyboardInterrupt, SystemExit, GeneratorExit)
/// raised inside a generator: carried through the C++ run untouched (GenerationInterrupted) and
/// raised again in Python by the translator bind_generators installs.
class PythonInterrupt : public GenerationInterrupted {
 public:
  explicit PythonInterrupt(py::error_already_set&& e)
      : error_(std::make_shared<py::error_already_set>(std::move(e))) {}
  void restore() const { error_->restore(); }

 private:
  std::shared_ptr<py::error_already_set> error_;
};

/// Rethrows `e` as PythonInterrupt when it is not an Exception (the user's Ctrl-C, sys.exit).
void pass_interrupts(py::error_already_set& e) {
  if (!e.matches(PyExc_Exception)) throw PythonInterrupt(std::move(e));
}

std::string python_error_text(py::error_already_set& e) {
  return py::str(e.value()).cast<std::string>().empty() ? std::string(e.what())
                                                        : py::str(e.value()).cast<std::string>();
}

Table call_generate(const PythonGenerator& g, const GeneratorInput& in) {
  py::gil_scoped_acquire gil;
  py::object result;
  try {
    result = g.generate(input_object(in));
  } catch (py::error_already_set& e) {
    pass_interrupts(e);
    const std::string text = python_error_text(e);
    if (e.matches(constraint_error_type())) throw ScheduleConstraintError(text);
    throw InputError(fmt::format("python generator '{}' ({}): {}: {}", g.info.name, g.origin,
                                 py::str(e.type().attr("__name__")).cast<std::string>(), text));
  }
  try {
    return result.cast<Table>();
  } catch (const py::cast_error&) {
    throw InputError(
        fmt::format("python generator '{}' ({}): returned {}, not a bubblesim.Table", g.info.name,
                    g.origin, py::str(py::type::of(result).attr("__name__")).cast<std::string>()));
  }
}

Formula call_formula(const PythonGenerator& g, const GeneratorInput& in) {
  py::gil_scoped_acquire gil;
  Formula f;
  try {
    py::object r = g.formula(input_object(in));
    if (r.is_none()) return f;
    py::dict d = r.cast<py::dict>();
    if (d.contains("bubble_ratio") && !d["bubble_ratio"].is_none())
      f.bubble_ratio = d["bubble_ratio"].cast<double>();
    if (d.contains("peak_activation_units") && !d["peak_activation_units"].is_none())
      f.peak_activation_units = d["peak_activation_units"].cast<double>();
    if (d.contains("note")) f.note = d["note"].cast<std::string>();
  } catch (py::error_already_set& e) {
    pass_interrupts(e);
    throw InputError(fmt::format("python generator '{}' ({}): formula: {}", g.info.name, g.origin,
                                 python_error_text(e)));
  } catch (const py::cast_error& e) {
    throw InputError(
        fmt::format("python generator '{}' ({}): formula: return None or a dict with bubble_ratio, "
                    "peak_activation_units and note ({})",
                    g.info.name, g.origin, e.what()));
  }
  return f;
}

/// (name, type, default, help, choices, minimum) from the Python side (bubblesim.Param).
ParamSpec param_spec(const py::tuple& t) {
  const auto name = t[0].cast<std::string>();
  const auto type = t[1].cast<std::string>();
  const py::object def = t[2];
  const auto help = t[3].cast<std::string>();
  if (type == "integer") {
    const auto minimum =
        t[5].is_none() ? std::numeric_limits<std::int64_t>::min() : t[5].cast<std::int64_t>();
    if (def.is_none()) return optional_integer_param(name, help, minimum);
    return integer_param(name, def.cast<std::int64_t>(), help, minimum);
  }
  if (type == "boolean") return boolean_param(name, def.cast<bool>(), help);
  if (type == "choice") {
    return choice_param(name, def.cast<std::string>(), t[4].cast<std::vector<std::string>>(), help);
  }
  ParamSpec spec;
  spec.name = name;
  spec.help = help;
  if (type == "real") {
    spec.type = ParamType::Real;
    spec.default_value = def.cast<double>();
    if (!t[5].is_none()) {
      const double minimum = t[5].cast<double>();
      spec.check = [minimum](const ParamValue& v) -> std::optional<std::string> {
        if (std::get<double>(v) < minimum) return fmt::format("at least {}", minimum);
        return std::nullopt;
      };
    }
    return spec;
  }
  if (type == "text") {
    spec.type = ParamType::Text;
    spec.default_value = def.cast<std::string>();
    return spec;
  }
  throw py::value_error(fmt::format(
      "parameter '{}': type '{}' is not one of integer, real, boolean, choice, text", name, type));
}

void rebuild_locked() {
  auto registry = std::make_shared<Registry>(builtin_registry());
  if (python_generators != nullptr) {
    for (const std::shared_ptr<PythonGenerator>& g : *python_generators) {
      Generator generator;
      generator.info = g->info;
      generator.generate = [g](const GeneratorInput& in) { return call_generate(*g, in); };
      if (!g->formula.is_none())
        generator.formula = [g](const GeneratorInput& in) { return call_formula(*g, in); };
      registry->add_from([&](Registrar& r) { r.add(std::move(generator)); }, g->origin);
    }
  }
  current = std::move(registry);
}

void register_generator(const std::string& name, const std::string& description,
                        const std::string& placement, const std::string& source,
                        const std::vector<py::tuple>& params, py::object generate,
                        py::object formula, const std::string& origin, bool replace) {
  auto g = std::make_shared<PythonGenerator>();
  g->info = GeneratorInfo{name, description, placement, source, {}};
  for (const py::tuple& t : params) g->info.params.push_back(param_spec(t));
  g->origin = origin;
  g->generate = std::move(generate);
  g->formula = std::move(formula);
  std::lock_guard lock(state_mutex);
  if (python_generators == nullptr)
    python_generators = new std::vector<std::shared_ptr<PythonGenerator>>();
  auto next = *python_generators;
  auto same =
      std::find_if(next.begin(), next.end(), [&](const auto& p) { return p->info.name == name; });
  if (same != next.end()) {
    if (!replace) {
      throw py::value_error(fmt::format(
          "generator '{}' is already registered from Python ({}); pass replace=True to replace it",
          name, (*same)->origin));
    }
    *same = g;
  } else {
    if (builtin_registry().find(name) != nullptr)
      throw py::value_error(fmt::format("generator '{}' is a built-in: choose another name", name));
    next.push_back(g);
  }
  const auto previous = *python_generators;
  *python_generators = std::move(next);
  try {
    rebuild_locked();
  } catch (const std::exception&) {
    *python_generators = previous;
    rebuild_locked();
    throw;
  }
}

py::dict generator_info(const Registry& reg, const std::string& name) {
  const Generator* g = reg.find(name);
  if (g == nullptr) throw py::key_error(reg.unknown_name_message(name));
  py::list params;
  for (const ParamSpec& p : g->info.params) {
    py::dict d;
    d["name"] = p.name;
    d["type"] = std::string(param_type_name(p.type));
    d["default"] = p.optional_default ? py::none() : param_to_python(p.default_value);
    d["help"] = p.help;
    d["choices"] = p.choices;
    params.append(d);
  }
  py::dict d;
  d["name"] = g->info.name;
  d["description"] = g->info.description;
  d["placement"] = g->info.placement;
  d["source"] = g->info.source;
  d["origin"] = reg.origin(name);
  d["params"] = params;
  d["has_formula"] = static_cast<bool>(g->formula);
  return d;
}

}  // namespace

std::shared_ptr<const Registry> registry() {
  std::lock_guard lock(state_mutex);
  if (!current) rebuild_locked();
  return current;
}

void clear_python_generators() {
  std::lock_guard lock(state_mutex);
  current.reset();
  if (python_generators != nullptr) python_generators->clear();
}

void bind_generators(py::module_& m) {
  // A Ctrl-C (or sys.exit) inside a Python generator ends the run and is raised again as itself.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonInterrupt& interrupt) {
      interrupt.restore();
    }
  });
  m.attr("ScheduleConstraintError") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "bubblesim.ScheduleConstraintError",
      "Raised by a generator that cannot produce a table for this input (the shape or a parameter "
      "does not fit the schedule): the schedule's outcome is `infeasible`, the others still run, "
      "and the contract check skips the input.",
      PyExc_ValueError, nullptr));
  m.def("_register_generator", &register_generator, py::arg("name"), py::arg("description"),
        py::arg("placement"), py::arg("source"), py::arg("params"), py::arg("generate"),
        py::arg("formula"), py::arg("origin"), py::arg("replace"));
  m.def("_generator_names", [] { return registry()->names(); });
  m.def("_generator_info",
        [](const std::string& name) { return generator_info(*registry(), name); });
  m.def(
      "_check_contract",
      [](const std::string& name, std::vector<std::int32_t> devices,
         std::vector<std::int32_t> microbatches, std::vector<std::int32_t> chunks) {
        const std::shared_ptr<const Registry> reg = registry();
        const Generator* g = reg->find(name);
        if (g == nullptr) throw py::key_error(reg->unknown_name_message(name));
        ContractGrid grid;
        if (!devices.empty()) grid.devices = std::move(devices);
        if (!microbatches.empty()) grid.microbatches = std::move(microbatches);
        if (!chunks.empty()) grid.chunks = std::move(chunks);
        ContractStats stats;
        std::vector<ContractFailure> failures;
        {
          py::gil_scoped_release release;
          failures = check_generator_contract(*g, grid, &stats);
        }
        std::vector<std::string> messages;
        for (const ContractFailure& f : failures) messages.push_back(to_string(f));
        return py::make_tuple(messages, stats.accepted, stats.rejected);
      },
      py::arg("name"), py::arg("devices"), py::arg("microbatches"), py::arg("chunks"));
}

}  // namespace bubblesim::python
