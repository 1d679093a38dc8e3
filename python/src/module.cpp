// bubblesim._core: the C++ half of the Python package bubblesim (python/bubblesim/). The module
// is built by the CMake target _core (python/CMakeLists.txt, option BUBBLESIM_BUILD_PYTHON) and
// by `pip install .` (setup.py drives the same CMake). Each bind_* function lives in its own file.
#include <pybind11/stl.h>

#include "python/src/core.h"
#include "schedules/version.h"

namespace bubblesim::python {

void bind_errors(py::module_& m) {
  // ScenarioError: every diagnostic of a bad input; a ValueError, so generic handlers catch it.
  static py::object scenario_error = py::reinterpret_borrow<py::object>(PyErr_NewExceptionWithDoc(
      "bubblesim.ScenarioError",
      "Bad input: a scenario, sweep, table or generator that does not validate.\n\n"
      "str(error) is every diagnostic rendered as FILE:LINE:COL: error: KEY: MESSAGE, one per "
      "line; error.diagnostics lists them as Diagnostic(file, line, column, key, message).",
      PyExc_ValueError, nullptr));
  m.attr("ScenarioError") = scenario_error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      try {
        raise_input_error(e);
      } catch (py::error_already_set& set) {
        set.restore();
      }
    }
  });
}

[[noreturn]] void raise_input_error(const InputError& error) {
  py::gil_scoped_acquire gil;
  py::object type = py::module_::import("bubblesim._core").attr("ScenarioError");
  py::list diagnostics;
  for (const Diagnostic& d : error.diagnostics()) {
    diagnostics.append(
        py::make_tuple(d.where.file, d.where.line, d.where.column, d.key_path, d.message));
  }
  std::string text = error.what();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  py::object instance = type(text);
  instance.attr("diagnostics") = diagnostics;
  PyErr_SetObject(type.ptr(), instance.ptr());
  throw py::error_already_set();
}

}  // namespace bubblesim::python

PYBIND11_MODULE(_core, m) {
  namespace bp = bubblesim::python;
  m.doc() = "The C++ engine of bubblesim (use the package bubblesim, not this module).";
  m.attr("__version__") = BUBBLESIM_VERSION_STRING;
  bp::bind_errors(m);
  bp::bind_tables(m);
  bp::bind_scenarios(m);
  bp::bind_generators(m);
  bp::bind_sweeps(m);
  bp::bind_edits(m);
  bp::bind_plans(m);
  // The Python generators go before the interpreter does (they hold Python functions).
  pybind11::module_::import("atexit").attr("register")(
      pybind11::cpp_function([] { bp::clear_python_generators(); }));
}
