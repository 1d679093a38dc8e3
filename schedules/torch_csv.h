#pragma once
// PyTorch per-rank schedule CSV files (docs/schedule-rules.md section 7): read into a Table and
// write a Table back. Pure functions over Table; no engine.
//
// File layout: one row per rank in rank order, one cell per action, an empty cell = idle, no
// header, ragged rows. Actions: global stage, type code, microbatch (`0F1`, `2I0`), or a compound
// `(0F7;7B3)OVERLAP_F_B` (our fused F&B op, forward half first).
//
// Dialects:           input backward  weight  full backward
//   current           I               W       B          (+ OVERLAP_F_B)
//   2024              B               W       BW
// Our table semantics: our B is backward-for-inputs when the table has the W, else the full
// backward, so we write I/B (current) or B/BW (2024) from that.
//
// Unlike PyTorch's prefix-matching parser, every cell must match completely (`2BW0x` and `0Q1`
// are errors with the cell's row and column). Stage -> rank placement is inferred from the file;
// devices, stages and microbatches are taken from it; chunks = stages / devices when that divides
// evenly, else 1 (such a table has no uniform cost split and the runner rejects it).

#include <optional>
#include <string>
#include <string_view>

#include "schedules/table.h"

namespace bubblesim {

enum class TorchDialect { Current, Legacy2024 };

/// "current" or "2024".
std::string_view torch_dialect_name(TorchDialect dialect);
/// Inverse of torch_dialect_name; nullopt for anything else.
std::optional<TorchDialect> torch_dialect_from_name(std::string_view name);

struct TorchCsvImport {
  Table table;
  TorchDialect dialect = TorchDialect::Current;
  bool detected = false;  // the dialect was detected rather than given
  /// Why detection chose the dialect when the file alone does not decide it ("" otherwise).
  std::string note;
};

/// Parses `text` (named `file` in diagnostics). `dialect` nullopt = detect: I, OVERLAP_F_B or
/// REDUCE_GRAD mean current; BW or a combined comm (SEND_F_RECV_B, SEND_B_RECV_F) mean 2024; a W
/// with no I means 2024; a file with only F and B is read in the current dialect (B = full
/// backward, as torch.distributed.pipelining loads it today) and `note` says so.
/// Throws InputError listing every problem (bad cells with FILE:LINE:COL, then PyTorch's
/// validation rules: per stage m forwards, #I = #W, #B + (#I + #W) / 2 = m, backward after its
/// forward, W after its I, each stage on one rank, no communication actions).
TorchCsvImport read_torch_csv(std::string_view text, const std::string& file,
                              std::optional<TorchDialect> dialect);

/// Reads the file at `path` (InputError if it cannot be read).
TorchCsvImport read_torch_csv_file(const std::string& path, std::optional<TorchDialect> dialect);

/// Writes `table` in the given dialect. Throws std::invalid_argument for what the format cannot
/// express: recompute/offload/reload ops and weight-replicating placements.
std::string write_torch_csv(const Table& table, TorchDialect dialect = TorchDialect::Current);

}  // namespace bubblesim
