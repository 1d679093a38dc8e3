#pragma once
// Where a command's output goes: stdout, or a file written atomically (-o FILE).

#include <string>

namespace bubblesim {

/// Writes `content` to stdout when `output` is "" or "-", else atomically to the file `output`.
void emit(const std::string& output, const std::string& content);

}  // namespace bubblesim
