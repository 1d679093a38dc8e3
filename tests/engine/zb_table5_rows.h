#pragma once
// The zero-bubble paper's Table 5 rows (tests/data/zb_paper_table5_subset.csv,
// copied from the paper): Table 9's profiled per-stage times and the bubble rates of 1F1B, ZB-H1,
// ZB-H2, ZB-1p and ZB-2p; and the rows' per-stage costs with the models' activation memory.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine_test_support.h"

namespace bubblesim::testing {

struct Row {
  std::string model;
  int p = 0, m = 0;
  double tf = 0, tb = 0, tw = 0, tcomm = 0;
  double bubble_1f1b = 0, bubble_zb_h1 = 0, bubble_zb_h2 = 0, zb_1p = 0, zb_2p = 0;
};

inline std::vector<Row> read_rows() {
  std::ifstream in(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/zb_paper_table5_subset.csv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<std::string> c;
    while (std::getline(ss, cell, ',')) c.push_back(cell);
    REQUIRE(c.size() == 12);
    rows.push_back({c[0], std::stoi(c[1]), std::stoi(c[2]), std::stod(c[3]), std::stod(c[4]),
                    std::stod(c[5]), std::stod(c[6]), std::stod(c[7]), std::stod(c[8]),
                    std::stod(c[9]), std::stod(c[10]), std::stod(c[11])});
  }
  return rows;
}

/// Per-layer activation bytes of the ZB paper's models (its Table 3, checked: 1.5B h = 2304, a =
/// 24; 6.2B h = 4096, a = 32; s = 1024, b = 1): M_B = s b (34h + 5as), M_W = 32 s b h. Only M_W /
/// M_B matters.
inline StageCost row_cost(const Row& row) {
  const double h = row.model == "1.5B" ? 2304 : 4096, a = row.model == "1.5B" ? 24 : 32, s = 1024;
  StageCost c = stage_cost_ms(row.tf, row.tb, row.tw);
  c.activation = Bytes(static_cast<std::int64_t>(s * (34 * h + 5 * a * s)));
  c.weight_grad = Bytes(static_cast<std::int64_t>(32 * s * h));
  return c;
}

}  // namespace bubblesim::testing
