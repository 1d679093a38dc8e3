// Fuzz target: the quantity parsers (time, bytes, bandwidth, FLOP rate). Each must return a value
// or throw QuantityError (their documented error) / OverflowError for any text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/units/overflow_error.h"
#include "sim/units/quantity_parser.h"

namespace {

template <typename F>
void try_parse(F parse, std::string_view text) {
  try {
    (void)parse(text);
  } catch (const bubblesim::QuantityError&) {
  } catch (const bubblesim::OverflowError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try_parse([](std::string_view t) { return bubblesim::parse_time(t); }, text);
  try_parse([](std::string_view t) { return bubblesim::parse_bytes(t); }, text);
  try_parse([](std::string_view t) { return bubblesim::parse_bandwidth(t); }, text);
  try_parse([](std::string_view t) { return bubblesim::parse_flop_rate(t); }, text);
  return 0;
}
