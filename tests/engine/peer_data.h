#pragma once
// The data rows of a peer's output stored under tests/data (a CSV written by a driver in
// tests/bench/peers): '#' lines and the header skipped, each row split at its commas.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bubblesim::testing {

inline std::vector<std::vector<std::string>> peer_data_rows(const std::string& file) {
  std::ifstream in(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/" + file);
  REQUIRE(in.good());
  std::vector<std::vector<std::string>> rows;
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::stringstream ss(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace bubblesim::testing
