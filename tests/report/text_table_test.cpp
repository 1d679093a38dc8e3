// Rows that do not differ collapse (sim/report/text_table.h, collapse_numbered_rows): a run of
// consecutive numbered names with otherwise equal cells becomes one row "0-7"; anything that
// differs, or a gap in the numbers, keeps its own row.
#include "sim/report/text_table.h"

#include <doctest/doctest.h>

using namespace bubblesim;

using Rows = std::vector<std::vector<std::string>>;

TEST_CASE("identical TP all-reduces of consecutive stages collapse into one row") {
  Rows rows;
  for (int s = 0; s < 8; ++s)
    rows.push_back({"1f1b", "tp all-reduce stage " + std::to_string(s) + " (per F op)", "20"});
  rows.push_back({"1f1b", "dp all-reduce stage 0", "367"});
  CHECK(collapse_numbered_rows(rows, 1) ==
        Rows{{"1f1b", "tp all-reduce stage 0-7 (per F op)", "20"},
             {"1f1b", "dp all-reduce stage 0", "367"}});
}

TEST_CASE("memory rows of devices that do not differ collapse; a differing row splits the run") {
  const Rows rows{{"zb-v", "0", "63.02"}, {"zb-v", "1", "55.92"}, {"zb-v", "2", "55.92"},
                  {"zb-v", "3", "55.92"}, {"zb-v", "4", "56.83"}, {"zb-v", "5", "56.83"}};
  CHECK(collapse_numbered_rows(rows, 1) ==
        Rows{{"zb-v", "0", "63.02"}, {"zb-v", "1-3", "55.92"}, {"zb-v", "4-5", "56.83"}});
  // Stage costs: the number is the first column.
  const Rows costs{{"0", "33.446"}, {"1", "33.148"}, {"2", "33.148"}, {"3", "37.966"}};
  CHECK(collapse_numbered_rows(costs, 0) ==
        Rows{{"0", "33.446"}, {"1-2", "33.148"}, {"3", "37.966"}});
}

TEST_CASE("rows are kept apart across a gap, another name or another schedule") {
  const Rows gap{{"a", "stage 0", "1"}, {"a", "stage 2", "1"}};
  CHECK(collapse_numbered_rows(gap, 1) == gap);
  const Rows other_name{{"a", "tp stage 0", "1"}, {"a", "dp stage 1", "1"}};
  CHECK(collapse_numbered_rows(other_name, 1) == other_name);
  const Rows other_schedule{{"a", "0", "1"}, {"b", "1", "1"}};
  CHECK(collapse_numbered_rows(other_schedule, 1) == other_schedule);
  const Rows no_number{{"a", "total", "1"}, {"a", "total", "1"}};
  CHECK(collapse_numbered_rows(no_number, 1) == no_number);
}

TEST_CASE("a wrapped column breaks a label wider than itself after a comma, so the table fits") {
  TextTable t({"rank", "schedule", "iteration s", "speed-up vs 1f1b", "bubble"});
  t.align_left(1);
  t.add_row({"1",
             "optimized(objective=iteration,budget_units=4,budget_evals=4000,method=heuristic)",
             "2.9545", "1.10x", "0.1970"});
  t.add_row({"2", "1f1b", "3.2500", "1.00x", "0.2431"});
  const std::string out = t.render(60);
  std::size_t lines = 0;
  for (std::size_t from = 0; from < out.size(); ++lines) {
    const std::size_t end = out.find('\n', from);
    CHECK(end - from <= 60);
    from = end + 1;
  }
  CHECK(lines > 4);  // the label took several lines
  INFO(out);
  CHECK(out.find("optimized(objective") == std::string::npos);  // broken after the parenthesis
  CHECK(out.find(" objective=iteration,\n") != std::string::npos);
  CHECK(out.find("method=heuristic)") != std::string::npos);
}
