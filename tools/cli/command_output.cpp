#include "tools/cli/command_output.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>

#include "sim/report/atomic_file.h"
#include "sim/units/diagnostics.h"
#include "sim/units/utf8.h"

namespace bubblesim {

void emit(const std::string& output, const std::string& content, bool quiet,
          const std::string& what) {
  if (output.empty() || output == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
  } else {
    write_file_atomically(output, content);
    say_written(quiet, output, what);
  }
}

void check_outputs(const std::vector<std::string>& outputs) {
  std::vector<std::pair<std::string, std::string>> seen;  // canonical target, as given
  for (const std::string& output : outputs) {
    if (output.empty() || output == "-") continue;
    // Two outputs onto one file (also through a symlink or another spelling, existing or not).
    const std::string target =
        std::filesystem::weakly_canonical(check_output_path(output)).string();
    for (const auto& [other_target, other] : seen) {
      if (other_target == target) {
        throw InputError(fmt::format("cannot write '{}': it is also the output '{}' of this run",
                                     output, other));
      }
    }
    seen.emplace_back(target, output);
  }
}

void say_written(bool quiet, const std::string& path, const std::string& what) {
  if (!quiet)
    fmt::print(stderr, "wrote {}{}\n", visible_controls(path),
               what.empty() ? "" : " (" + what + ")");
}

std::size_t text_width() {
  const char* columns = std::getenv("COLUMNS");
  if (columns == nullptr) return 100;
  char* end = nullptr;
  const long v = std::strtol(columns, &end, 10);
  return end != columns && *end == '\0' && v >= 20 && v <= 10000 ? static_cast<std::size_t>(v)
                                                                 : 100;
}

}  // namespace bubblesim
