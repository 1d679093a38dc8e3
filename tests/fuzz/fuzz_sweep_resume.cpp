// Fuzz target: the --resume check of a sweep CSV (sim/sweep/sweep_resume.h). Each input is the
// text of a file being resumed against a fixed sweep of ten points with one axis; whatever the
// text, the check either refuses it (InputError) or keeps a prefix of it that starts with the
// fingerprint line and the header and holds at most the sweep's points.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/sweep/sweep_resume.h"
#include "sim/units/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bubblesim::ResumeExpectation expect{
      "# bubblesim sweep fingerprint=0123456789abcdef\n",
      "point,entry,pipeline.stages,status,error\n",
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
      [](std::int64_t p) { return ",\"s," + std::to_string(p) + "\""; }};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    bubblesim::ResumeCheck check = bubblesim::check_resume(text, expect, "fuzz.csv");
    const std::string start = expect.fingerprint_line + expect.header;
    if (check.keep_bytes > text.size() || check.points_kept > expect.points.size())
      __builtin_trap();
    if (check.keep_bytes > 0 && text.substr(0, start.size()) != start) __builtin_trap();
    if (check.keep_bytes == 0 && check.points_kept != 0) __builtin_trap();
    if (check.keep_bytes > 0 && text[check.keep_bytes - 1] != '\n') __builtin_trap();
  } catch (const bubblesim::InputError&) {
  }
  return 0;
}
