// Fuzz target: the PyTorch per-rank schedule CSV importer (dialect detected), then the table
// validator on whatever it accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "schedules/torch_csv.h"
#include "schedules/validator.h"
#include "sim/units/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    bubblesim::TorchCsvImport imported = bubblesim::read_torch_csv(text, "fuzz.csv", std::nullopt);
    (void)bubblesim::validate_table(imported.table);
  } catch (const bubblesim::InputError&) {
  }
  return 0;
}
