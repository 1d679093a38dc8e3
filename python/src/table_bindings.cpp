// bubblesim._core: schedule tables as Python objects (Op, Table: per device the ordered ops, and
// the placement of stages on devices), validated by the C++ validator and read from and written
// to the PyTorch per-rank CSV (schedules/torch_csv.h) and bubblesim's own table CSV.
#include <fmt/format.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include "python/src/core.h"
#include "schedules/table_csv.h"
#include "schedules/torch_csv.h"
#include "schedules/validator.h"

namespace bubblesim::python {
namespace {

OpKind kind_from(const std::string& text) {
  std::optional<OpKind> kind;
  if (text.size() == 1) kind = op_kind_from_letter(text[0]);
  if (!kind) {
    throw py::value_error(fmt::format(
        "op kind '{}': use one letter of F (forward), B (backward), W (weight gradient), R "
        "(recompute), O (offload), L (reload) or X (fused forward and backward)",
        text));
  }
  return *kind;
}

Placement placement_from(const py::object& placement, std::int32_t devices, std::int32_t chunks) {
  if (placement.is_none() || py::isinstance<py::str>(placement)) {
    const std::string name = placement.is_none() ? "" : placement.cast<std::string>();
    if (name.empty()) {
      return chunks == 1 ? Placement::straight(devices)
                         : Placement::loop(devices, devices * chunks);
    }
    if (name == "straight") return Placement::straight(devices * chunks);
    if (name == "loop") return Placement::loop(devices, devices * chunks);
    if (name == "V" || name == "v") return Placement::v_shape(devices);
    throw py::value_error(fmt::format(
        "placement '{}': use straight, loop, V or a list per replica of the device of each stage",
        name));
  }
  Placement p;
  p.device_of_stage = placement.cast<std::vector<std::vector<std::int32_t>>>();
  return p;
}

std::optional<TorchDialect> dialect_from(const std::string& name) {
  if (name.empty() || name == "detect") return std::nullopt;
  std::optional<TorchDialect> d = torch_dialect_from_name(name);
  if (!d) throw py::value_error("dialect '" + name + "': use current, 2024 or detect");
  return d;
}

}  // namespace

void bind_tables(py::module_& m) {
  py::class_<Op>(m, "Op",
                 "One entry of a schedule table: kind (F, B, W, R, O, L or X), stage, microbatch; "
                 "a fused X op also has the backward half's stage and microbatch.")
      .def(py::init([](const std::string& kind, std::int32_t stage, std::int32_t microbatch,
                       std::int32_t backward_stage, std::int32_t backward_microbatch) {
             return Op{kind_from(kind), stage, microbatch, backward_stage, backward_microbatch};
           }),
           py::arg("kind"), py::arg("stage"), py::arg("microbatch"), py::arg("backward_stage") = -1,
           py::arg("backward_microbatch") = -1)
      .def_property_readonly(
          "kind", [](const Op& op) { return std::string(1, op_kind_letter(op.kind)); },
          "One letter: F B W R O L, or X for a fused forward and backward.")
      .def_readonly("stage", &Op::stage)
      .def_readonly("microbatch", &Op::microbatch)
      .def_readonly("backward_stage", &Op::backward_stage)
      .def_readonly("backward_microbatch", &Op::backward_microbatch)
      .def(py::self == py::self)
      .def("__hash__",
           [](const Op& op) {
             return py::hash(py::make_tuple(static_cast<int>(op.kind), op.stage, op.microbatch,
                                            op.backward_stage, op.backward_microbatch));
           })
      .def("__str__", [](const Op& op) { return to_string(op); })
      .def("__repr__", [](const Op& op) { return fmt::format("Op('{}')", to_string(op)); })
      .def(py::pickle(
          [](const Op& op) {
            return py::make_tuple(std::string(1, op_kind_letter(op.kind)), op.stage, op.microbatch,
                                  op.backward_stage, op.backward_microbatch);
          },
          [](const py::tuple& t) {
            return Op{kind_from(t[0].cast<std::string>()), t[1].cast<std::int32_t>(),
                      t[2].cast<std::int32_t>(), t[3].cast<std::int32_t>(),
                      t[4].cast<std::int32_t>()};
          }));

  py::class_<Table>(m, "Table",
                    "A schedule as data: per device the ordered list of ops it executes, and the "
                    "device of every stage (per replica).")
      .def(py::init([](std::int32_t devices, std::int32_t microbatches, std::int32_t chunks,
                       const py::object& placement) {
             if (devices < 1 || microbatches < 1 || chunks < 1)
               throw py::value_error("devices, microbatches and chunks must be at least 1");
             Table t = Table::empty(devices, chunks, microbatches,
                                    placement_from(placement, devices, chunks));
             if (!t.placement.device_of_stage.empty())
               t.stages = static_cast<std::int32_t>(t.placement.device_of_stage.front().size());
             return t;
           }),
           py::arg("devices"), py::arg("microbatches"), py::arg("chunks") = 1,
           py::arg("placement") = py::none(),
           "An empty table; placement is 'straight', 'loop', 'V' or a list per replica of the "
           "device of each stage (default: straight for chunks=1, else loop).")
      .def_readonly("devices", &Table::devices)
      .def_readonly("stages", &Table::stages)
      .def_readonly("chunks", &Table::chunks)
      .def_readonly("microbatches", &Table::microbatches)
      .def_property(
          "device_ops", [](const Table& t) { return t.device_ops; },
          [](Table& t, std::vector<std::vector<Op>> ops) {
            if (ops.size() != static_cast<std::size_t>(t.devices))
              throw py::value_error(
                  fmt::format("device_ops needs {} lists, one per device", t.devices));
            t.device_ops = std::move(ops);
          },
          "Per device, its ops in execution order (a copy: assign to replace them).")
      .def_property_readonly(
          "placement", [](const Table& t) { return t.placement.device_of_stage; },
          "device_of_stage[replica][stage] -> device.")
      .def_property(
          "replica_of_microbatch", [](const Table& t) { return t.placement.replica_of_microbatch; },
          [](Table& t, std::vector<std::int32_t> r) {
            t.placement.replica_of_microbatch = std::move(r);
          },
          "Per microbatch the replica it runs through (empty: replica 0 for all).")
      .def(
          "append",
          [](Table& t, std::int32_t device, const Op& op) {
            if (device < 0 || device >= t.devices)
              throw py::index_error(
                  fmt::format("device {} is not in 0..{}", device, t.devices - 1));
            t.device_ops[static_cast<std::size_t>(device)].push_back(op);
          },
          py::arg("device"), py::arg("op"), "Appends `op` to the ops of `device`.")
      .def(
          "ops", [](const Table& t, std::int32_t device) { return t.device_ops.at(device); },
          py::arg("device"), "The ops of `device` in order.")
      .def("op_count", &Table::op_count, "Number of ops over all devices.")
      .def("validate", &validate_table,
           "The problems of the table (each op exactly once, dependencies, placement); empty "
           "when it is valid.")
      .def(
          "to_torch_csv",
          [](const Table& t, const std::string& dialect) {
            try {
              return write_torch_csv(t, *dialect_from(dialect == "detect" ? "current" : dialect));
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
          },
          py::arg("dialect") = "current",
          "The table as a PyTorch per-rank schedule CSV (dialect 'current' or '2024').")
      .def_static(
          "from_torch_csv",
          [](const std::string& text, const std::string& dialect, const std::string& name) {
            try {
              return read_torch_csv(text, name, dialect_from(dialect)).table;
            } catch (const InputError& e) {
              raise_input_error(e);
            }
          },
          py::arg("text"), py::arg("dialect") = "detect", py::arg("name") = "<string>",
          "Reads a PyTorch per-rank schedule CSV given as text (ScenarioError listing every "
          "problem with name:line:column).")
      .def(
          "to_csv", [](const Table& t) { return write_table_csv(t); },
          "The table in bubblesim's own CSV (as `bubblesim table` writes it).")
      .def_static(
          "from_csv",
          [](const std::string& text, const std::string& name) {
            try {
              return read_table_csv(text, name);
            } catch (const InputError& e) {
              raise_input_error(e);
            }
          },
          py::arg("text"), py::arg("name") = "<string>", "Reads bubblesim's own table CSV.")
      .def("__eq__",
           [](const Table& a, const Table& b) {
             return a.devices == b.devices && a.stages == b.stages && a.chunks == b.chunks &&
                    a.microbatches == b.microbatches &&
                    a.placement.device_of_stage == b.placement.device_of_stage &&
                    a.placement.replica_of_microbatch == b.placement.replica_of_microbatch &&
                    a.device_ops == b.device_ops;
           })
      .def("__repr__", [](const Table& t) {
        return fmt::format("<bubblesim.Table devices={} stages={} microbatches={} ops={}>",
                           t.devices, t.stages, t.microbatches, t.op_count());
      });
}

}  // namespace bubblesim::python
