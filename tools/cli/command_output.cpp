#include "tools/cli/command_output.h"

#include <cstdio>

#include "tools/report/atomic_file.h"

namespace bubblesim {

void emit(const std::string& output, const std::string& content) {
  if (output.empty() || output == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
  } else {
    write_file_atomically(output, content);
  }
}

}  // namespace bubblesim
