#pragma once
// The Python module bubblesim._core: what its binding files share. The registry every call from
// Python uses (the built-in generators plus those registered from Python), and the converters
// between C++ errors and the Python exceptions the package raises.

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "schedules/registry.h"
#include "sim/units/diagnostics.h"

namespace bubblesim::python {

namespace py = pybind11;

/// The registry of this process: built-ins first, then the Python generators in the order they
/// were registered. Rebuilt when a Python generator is added or replaced; a run keeps the snapshot
/// it started with.
std::shared_ptr<const Registry> registry();

/// The Python exception `bubblesim.ScenarioError` (set up by bind_errors): an InputError's text
/// as its message and its diagnostics as a list of (file, line, column, key, message).
[[noreturn]] void raise_input_error(const InputError& error);

void bind_errors(py::module_& m);
void bind_tables(py::module_& m);
void bind_scenarios(py::module_& m);
void bind_generators(py::module_& m);
void bind_sweeps(py::module_& m);
void bind_edits(py::module_& m);
void bind_plans(py::module_& m);

/// Drops the Python objects the registry holds (called when the module is torn down, with the GIL
/// held, so no Python object outlives the interpreter inside a C++ static).
void clear_python_generators();

}  // namespace bubblesim::python
