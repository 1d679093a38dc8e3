// bubblesim._core: the pieces of `bubblesim sweep` (sim/sweep/sweep_runner.h) for sweeps whose
// points run on any concurrent.futures executor: a point's CSV rows computed by the same C++ code,
// and the output file written, locked, resumed and renamed by the same SweepFile, so the file is
// byte for byte the one `bubblesim sweep` writes.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <memory>

#include "python/src/core.h"
#include "sim/sweep/sweep_file.h"
#include "sim/sweep/sweep_fingerprint.h"
#include "sim/sweep/sweep_resume.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"

namespace bubblesim::python {
namespace {

/// One sweep file loaded: its points' rows (any process may hold one) and, once started, its
/// output.
class SweepPlan {
 public:
  SweepPlan(const std::string& path, std::int64_t max_ops, std::int64_t shard_index,
            std::int64_t shard_count)
      : spec_(load_sweep(path)), max_ops_(max_ops), shard_{shard_index, shard_count} {
    if (shard_count < 1 || shard_index < 0 || shard_index >= shard_count)
      throw InputError(
          fmt::format("shard {}/{}: needs 0 <= index < count", shard_index, shard_count));
    for (std::int64_t p = shard_.index; p < spec_.point_count(); p += shard_.count)
      points_.push_back(p);
  }

  std::int64_t point_count() const { return spec_.point_count(); }
  const std::vector<std::int64_t>& points() const { return points_; }

  /// The rows of `point` and whether its scenario was invalid.
  std::pair<std::string, bool> run_point(std::int64_t point, int threads) const {
    if (point < 0 || point >= spec_.point_count())
      throw py::index_error(
          fmt::format("point {} is not in 0..{}", point, spec_.point_count() - 1));
    bool failed = false;
    std::string rows;
    {
      py::gil_scoped_release release;
      rows = sweep_point_rows(spec_, *registry(), point, max_ops_, threads, failed);
    }
    return {rows, failed};
  }

  /// Checks the first point, opens and locks OUTPUT.partial and writes the start (fresh, or what
  /// --resume keeps). Returns the points still to run and the notes of the resume.
  std::pair<std::vector<std::int64_t>, std::vector<std::string>> start(const std::string& output,
                                                                       bool resume) {
    check_sweep_first_point(spec_, *registry());
    ResumeExpectation expect{
        fingerprint_line(sweep_fingerprint(spec_, max_ops_, sweep_point_inputs(spec_, *registry())),
                         shard_.index, shard_.count),
        sweep_csv_header(spec_), points_,
        [this](std::int64_t p) { return sweep_axis_cells(spec_, p); }};
    file_ = std::make_unique<SweepFile>(output);
    SweepSummary summary;
    const std::size_t kept = start_sweep_output(*file_, expect, resume, summary);
    resumed_ = static_cast<std::int64_t>(kept);
    return {std::vector<std::int64_t>(points_.begin() + static_cast<std::ptrdiff_t>(kept),
                                      points_.end()),
            summary.notes};
  }
  void append(const std::string& rows) { open().append(rows); }
  /// Renames the partial file over the output and releases it.
  void finish() {
    open().finish();
    file_.reset();
  }
  /// Releases the output without finishing it (OUTPUT.partial stays, for --resume).
  void abandon() { file_.reset(); }
  std::int64_t resumed() const { return resumed_; }

 private:
  SweepFile& open() {
    if (!file_) throw py::value_error("the sweep's output is not open: call start() first");
    return *file_;
  }
  SweepSpec spec_;
  std::int64_t max_ops_;
  Shard shard_;
  std::vector<std::int64_t> points_;
  std::unique_ptr<SweepFile> file_;
  std::int64_t resumed_ = 0;
};

template <typename F>
auto input_errors_raised(F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    raise_input_error(e);
  }
}

}  // namespace

void bind_sweeps(py::module_& m) {
  m.def("_shard", [](const std::string& text) {
    return input_errors_raised([&] {
      const Shard s = text.empty() ? shard_from_environment() : parse_shard(text);
      return std::make_pair(s.index, s.count);
    });
  });
  py::class_<SweepPlan>(m, "_SweepPlan")
      .def(py::init([](const std::string& path, std::int64_t max_ops, std::int64_t shard_index,
                       std::int64_t shard_count) {
             return input_errors_raised([&] {
               return std::make_unique<SweepPlan>(path, max_ops, shard_index, shard_count);
             });
           }),
           py::arg("path"), py::arg("max_ops"), py::arg("shard_index"), py::arg("shard_count"))
      .def_property_readonly("point_count", &SweepPlan::point_count)
      .def_property_readonly("points", &SweepPlan::points)
      .def_property_readonly("resumed", &SweepPlan::resumed)
      .def(
          "run_point",
          [](const SweepPlan& plan, std::int64_t point, int threads) {
            return input_errors_raised([&] { return plan.run_point(point, threads); });
          },
          py::arg("point"), py::arg("threads"))
      .def(
          "start",
          [](SweepPlan& plan, const std::string& output, bool resume) {
            return input_errors_raised([&] { return plan.start(output, resume); });
          },
          py::arg("output"), py::arg("resume"))
      .def("append",
           [](SweepPlan& plan, const std::string& rows) {
             input_errors_raised([&] {
               plan.append(rows);
               return 0;
             });
           })
      .def("finish",
           [](SweepPlan& plan) {
             input_errors_raised([&] {
               plan.finish();
               return 0;
             });
           })
      .def("abandon", &SweepPlan::abandon);
}

}  // namespace bubblesim::python
