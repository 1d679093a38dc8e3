// PyTorch per-rank CSV and bubblesim table CSV: parsing, dialects, located errors, round trips.
#include "schedules/torch_csv.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "schedules/table_csv.h"
#include "schedules/validator.h"
#include "sim/units/diagnostics.h"
#include "sim/units/text_file.h"

using namespace bubblesim;

namespace {

std::string data(const std::string& name) {
  return std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/pytorch/" + name;
}

/// The rendered diagnostics of importing `text`, or {} when it imports.
std::vector<std::string> import_errors(const std::string& text,
                                       std::optional<TorchDialect> dialect) {
  try {
    read_torch_csv(text, "t.csv", dialect);
  } catch (const InputError& e) {
    std::vector<std::string> out;
    for (const Diagnostic& d : e.diagnostics()) out.push_back(d.render());
    return out;
  }
  return {};
}

}  // namespace

TEST_CASE("the DualPipeV golden file imports in the current dialect with a V placement") {
  TorchCsvImport in = read_torch_csv_file(data("dualpipev_4rank_10mb.csv"), std::nullopt);
  CHECK(in.detected);
  CHECK(in.dialect == TorchDialect::Current);
  const Table& t = in.table;
  CHECK(t.devices == 4);
  CHECK(t.stages == 8);
  CHECK(t.chunks == 2);
  CHECK(t.microbatches == 10);
  CHECK(t.placement.device_of_stage.front() == std::vector<std::int32_t>{0, 1, 2, 3, 3, 2, 1, 0});
  // Rank 3 begins 3F0,4F0,...,3F4,4B0,(4F4;3B0)OVERLAP_F_B.
  CHECK(t.device_ops[3][0] == Op::forward(3, 0));
  CHECK(t.device_ops[3][9] == Op::backward(4, 0));
  CHECK(t.device_ops[3][10] == Op::fused(4, 4, 3, 0));
  // 7I0 with 7W0: our B with a W present is their I.
  CHECK(t.has_weight_op(7, 0));
  CHECK_FALSE(t.has_weight_op(7, 3));  // 7B3 is a full backward
  CHECK(validate_table(t).empty());
}

TEST_CASE(
    "the zero-bubble 2024-dialect file is detected as 2024 (W without I), idle cells skipped") {
  TorchCsvImport in =
      read_torch_csv_file(data("zb1p_2rank_2stagep_compute_2024dialect.csv"), std::nullopt);
  CHECK(in.detected);
  CHECK(in.dialect == TorchDialect::Legacy2024);
  const Table& t = in.table;
  CHECK(t.devices == 2);
  CHECK(t.stages == 4);
  CHECK(t.chunks == 2);
  CHECK(t.microbatches == 8);
  CHECK(t.placement.device_of_stage.front() == std::vector<std::int32_t>{0, 1, 0, 1});
  CHECK(t.device_ops[1].front() == Op::forward(1, 0));  // the row begins with an idle cell
  CHECK(t.device_ops[0][3] == Op::forward(2, 1));       // the idle fourth cell is dropped
  CHECK(t.has_weight_op(2, 0));
  CHECK(validate_table(t).empty());
  // The same file read explicitly as current fails: W without I.
  CHECK_FALSE(
      import_errors(write_torch_csv(t, TorchDialect::Legacy2024), TorchDialect::Current).empty());
}

TEST_CASE("dialect detection") {
  CHECK(read_torch_csv("0F0,0I0,0W0\n", "t", std::nullopt).dialect == TorchDialect::Current);
  CHECK(read_torch_csv("0F0,0BW0\n", "t", std::nullopt).dialect == TorchDialect::Legacy2024);
  CHECK(read_torch_csv("0F0,0B0,0W0\n", "t", std::nullopt).dialect == TorchDialect::Legacy2024);
  CHECK(
      read_torch_csv("0F0,1F0,(0F1;1B0)OVERLAP_F_B,1F1,1B1,0B0,0B1\n", "t", std::nullopt).dialect ==
      TorchDialect::Current);
  // Only F and B: read as the current dialect (B = full backward, what PyTorch loads today), and
  // the import says so in its note; a file that decides its dialect has no note.
  const TorchCsvImport fb = read_torch_csv("0F0,0B0\n", "t", std::nullopt);
  CHECK(fb.dialect == TorchDialect::Current);
  CHECK(fb.note.find("only F and B") != std::string::npos);
  CHECK(fb.table.op_count() == 2);
  CHECK(read_torch_csv("0F0,0BW0\n", "t", std::nullopt).note.empty());
  CHECK(import_errors("0F0,0B0\n", TorchDialect::Current).empty());
  // In 2024, B alone is backward-for-inputs with no W: PyTorch's count rule fails.
  CHECK_FALSE(import_errors("0F0,0B0\n", TorchDialect::Legacy2024).empty());
  // Both dialects' marks: an error, not a guess.
  CHECK_FALSE(import_errors("0F0,0I0,0W0,0F1,0BW1\n", std::nullopt).empty());
}

TEST_CASE("bad cells are errors with FILE:LINE:COL (line = row + 1, column of the cell)") {
  auto errors = import_errors("0F0,1F0\n1F1,2BW0x,0Q1\n", TorchDialect::Legacy2024);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] ==
        "t.csv:2:9: error: invalid action '2BW0x': unexpected trailing text 'x' after '2BW0'");
  CHECK(errors[1].rfind("t.csv:2:12: error: invalid action '0Q1': unknown action type 'Q'", 0) ==
        0);
  // Compound sub-actions point at the sub-action.
  errors = import_errors("0F0,(0F1;0B0z)OVERLAP_F_B\n", TorchDialect::Current);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind("t.csv:1:13: error:", 0) == 0);
  errors = import_errors("0F0,(0F1;0B0)OVERLAP\n", TorchDialect::Current);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("unknown compound type 'OVERLAP'") != std::string::npos);
}

TEST_CASE("a stage on two ranks and PyTorch's validation rules are all reported at once") {
  auto errors = import_errors("0F0,1F0\n1B0,0B0\n", TorchDialect::Current);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] ==
        "t.csv:2:1: error: '1B0': stage 1 is assigned to both rank 0 and rank 1; a stage must live "
        "on "
        "one rank");
  CHECK(errors[1].rfind("t.csv:2:5: error: '0B0': stage 0 is assigned to both rank 0 and rank 1",
                        0) == 0);

  // Backward before forward, W before I, missing forwards, and a comm action, in one report.
  errors = import_errors("0I0,0F0,0W1,0F1\n0SEND_F0\n", TorchDialect::Current);
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  CHECK(all.find("SEND_F is a communication or sharding action") != std::string::npos);
  errors = import_errors("0I0,0F0,0W1,0F1\n", TorchDialect::Current);
  all.clear();
  for (const std::string& e : errors) all += e + "\n";
  CHECK(all.find("t.csv:1:1: error: '0I0': backward-for-inputs of stage 0, microbatch 0 runs "
                 "before its forward") != std::string::npos);
  CHECK(all.find("t.csv:1:9: error: '0W1': weight gradient of stage 0, microbatch 1 runs before") !=
        std::string::npos);
  CHECK(all.find("(1 I + 1 W) / 2 must equal 2 microbatches") != std::string::npos);
}

TEST_CASE("write then read gives the same table in both dialects") {
  TorchCsvImport zb =
      read_torch_csv_file(data("zb1p_2rank_2stagep_compute_2024dialect.csv"), std::nullopt);
  for (TorchDialect d : {TorchDialect::Current, TorchDialect::Legacy2024}) {
    CAPTURE(torch_dialect_name(d));
    TorchCsvImport back = read_torch_csv(write_torch_csv(zb.table, d), "t", d);
    CHECK(back.table.device_ops == zb.table.device_ops);
    CHECK(back.table.placement.device_of_stage == zb.table.placement.device_of_stage);
  }
  TorchCsvImport dp = read_torch_csv_file(data("dualpipev_4rank_10mb.csv"), std::nullopt);
  CHECK(write_torch_csv(dp.table) == read_text_file(data("dualpipev_4rank_10mb.csv")));
  CHECK_THROWS_AS(write_torch_csv(dp.table, TorchDialect::Legacy2024), std::invalid_argument);

  // bubblesim's own CSV keeps the shape line and every op.
  Table t = read_table_csv(write_table_csv(dp.table), "t");
  CHECK(t.device_ops == dp.table.device_ops);
  CHECK(t.chunks == 2);
  CHECK(t.placement.device_of_stage == dp.table.placement.device_of_stage);
}

TEST_CASE("table CSV errors are located") {
  std::string text =
      "device,position,kind,stage,microbatch,backward_stage,backward_microbatch,start_s,end_s\n"
      "0,0,F,0,0,,,,\n"
      "0,1,Q,0,0,,,,\n";
  try {
    read_table_csv(text, "t.csv");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.diagnostics().front().render() ==
          "t.csv:3:5: error: kind 'Q' is not one of F B W R O L X");
  }
}

TEST_CASE("a stage or microbatch number past a gap is the error, at its cell") {
  using V = std::vector<std::string>;
  CHECK(import_errors("0F0,0B0,0F99,0B99\n", TorchDialect::Legacy2024) ==
        V{"t.csv:1:9: error: '0F99': microbatch 99, but microbatch 1 never appears; they are "
          "numbered from 0 without gaps"});
  CHECK(import_errors("0F0,0B0\n999999F0,999999B0\n", TorchDialect::Legacy2024) ==
        V{"t.csv:2:1: error: '999999F0': stage 999999, but stage 1 never appears; they are "
          "numbered from 0 without gaps"});
  // No gaps, but the numbering implies more forwards than the file has actions: refused before
  // stages x microbatches of anything is allocated.
  std::string diagonal;
  for (int i = 0; i < 1000; ++i) diagonal += (i > 0 ? "," : "") + fmt::format("{}F{}", i, i);
  CHECK(import_errors(diagonal + "\n", TorchDialect::Legacy2024) ==
        V{"t.csv: error: 1000 stages x 1000 microbatches need at least 1000000 forwards, but the "
          "file has 1000 actions"});
}
