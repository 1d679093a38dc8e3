// Fuzz target: bubblesim's own table CSV importer, then the table validator on what it accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "schedules/table_csv.h"
#include "schedules/validator.h"
#include "sim/units/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    bubblesim::Table table = bubblesim::read_table_csv(text, "fuzz.csv");
    (void)bubblesim::validate_table(table);
  } catch (const bubblesim::InputError&) {
  }
  return 0;
}
