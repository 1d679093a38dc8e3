// Fuzz target: the Chakra execution-trace importer, then the table validator on whatever it
// accepted. The input is the ranks' files joined by the line "--rank--" (seeds:
// tests/fuzz/seeds/chakra/, two-rank exports).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/chakra_et.h"
#include "schedules/validator.h"
#include "sim/units/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view separator = "\n--rank--\n";
  std::vector<bubblesim::ChakraTraceFile> files;
  for (;;) {
    const std::size_t at = text.find(separator);
    files.push_back(
        {"fuzz." + std::to_string(files.size()) + ".et", std::string(text.substr(0, at))});
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + separator.size());
  }
  try {
    bubblesim::Table table = bubblesim::read_chakra_traces(files);
    (void)bubblesim::validate_table(table);
  } catch (const bubblesim::InputError&) {
  }
  return 0;
}
