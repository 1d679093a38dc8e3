// from-file: a schedule table read from a file instead of generated: PyTorch's per-rank CSV
// (either dialect, see torch_csv.h), bubblesim's own table CSV (table_csv.h) or a folder of Chakra
// execution traces written by bubblesim (chakra_et.h). Devices, stages and microbatches come from
// the file and must agree with the scenario's pipeline.
#include <fmt/format.h>

#include <filesystem>

#include "schedules/chakra_et.h"
#include "schedules/generator.h"
#include "schedules/table_csv.h"
#include "schedules/torch_csv.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

std::string file_of(const GeneratorInput& in) {
  std::filesystem::path path(in.params.text("path"));
  if (path.is_relative() && !in.base_dir.empty()) path = std::filesystem::path(in.base_dir) / path;
  return path.lexically_normal().string();
}

std::optional<TorchDialect> dialect_of(const GeneratorInput& in) {
  const std::string& d = in.params.text("dialect");
  return d == "auto" ? std::nullopt : torch_dialect_from_name(d);
}

/// The report's note: which dialect a PyTorch CSV was read in, and why when auto chose it.
Formula from_file_note(const GeneratorInput& in) {
  Formula f;
  if (in.params.text("path").empty() || in.params.text("format") != "torch-csv") return f;
  const TorchCsvImport csv = read_torch_csv_file(file_of(in), dialect_of(in));
  f.note = fmt::format("PyTorch CSV, {} dialect{}", torch_dialect_name(csv.dialect),
                       csv.note.empty() ? (csv.detected ? " (detected)" : "") : ": " + csv.note);
  return f;
}

Table generate_from_file(const GeneratorInput& in) {
  const std::string& path_param = in.params.text("path");
  if (path_param.empty()) {
    throw ScheduleConstraintError(
        "needs params.path: the schedule file to read (relative to the scenario file)");
  }
  const std::string file = file_of(in);
  Table table;
  if (in.params.text("format") == "bubblesim-csv") {
    table = read_table_csv(read_text_file(file, InputSource::file, kMaxTableFileBytes), file);
  } else if (in.params.text("format") == "chakra") {
    table = read_chakra_folder(file);
  } else {
    table = read_torch_csv_file(file, dialect_of(in)).table;
  }
  if (table.devices != in.devices) {
    throw ScheduleConstraintError(
        fmt::format("{} has {} ranks (devices) but pipeline.stages is {}; they must agree", file,
                    table.devices, in.devices));
  }
  if (table.microbatches != in.microbatches) {
    throw ScheduleConstraintError(
        fmt::format("{} has {} microbatches but pipeline.microbatches is {}; they must agree", file,
                    table.microbatches, in.microbatches));
  }
  if (table.stages != table.devices * table.chunks) {
    throw ScheduleConstraintError(
        fmt::format("{} has {} stages on {} ranks; bubblesim needs the same number of stages "
                    "on every rank (stages a multiple of ranks)",
                    file, table.stages, table.devices));
  }
  return table;
}

}  // namespace

void register_from_file(Registrar& registrar) {
  ParamSpec path{"path",
                 ParamType::Text,
                 std::string(),
                 "schedule file, relative to the scenario file",
                 {},
                 {},
                 false};
  registrar.add(Generator{
      GeneratorInfo{
          "from-file",
          "a schedule table read from a file (PyTorch per-rank CSV, bubblesim CSV or Chakra)",
          "from the file",
          "PyTorch torch.distributed.pipelining _dump_csv/_load_csv; docs/table-files.md",
          {path,
           choice_param("format", "torch-csv", {"torch-csv", "bubblesim-csv", "chakra"},
                        "file format (chakra: path is the folder of per-rank traces)"),
           choice_param("dialect", "auto", {"auto", "current", "2024"},
                        "PyTorch dialect (torch-csv only): auto detects it")}},
      generate_from_file, from_file_note});
}

}  // namespace bubblesim
