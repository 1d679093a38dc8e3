#pragma once
// Table validation: reports every structural problem of a table at once.
//
// Checks: shape (devices, stages, microbatches, chunks), placement (every stage on an existing
// device, every op on the device its stage is placed on), completeness (exactly one F and one B
// per stage and microbatch, at most one W/R/O/L, an L only with its O), and order on one device
// (an op listed before an op it depends on, on the same device and stream, can never run).
// Cross-device cycles are left to the engine, which reports them as a deadlock.

#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/table.h"

namespace bubblesim {

/// Every problem found, one human-readable line each; empty when the table is valid.
std::vector<std::string> validate_table(const Table& table);

/// A table that failed validation; what() lists every problem.
class InvalidTableError : public std::invalid_argument {
 public:
  InvalidTableError(const std::string& table_name, std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

/// Throws InvalidTableError naming `table_name` when validate_table finds anything.
void require_valid_table(const Table& table, const std::string& table_name);

}  // namespace bubblesim
