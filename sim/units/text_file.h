#pragma once
// Reading a whole input file (a table CSV, a measured profile, a PyTorch schedule) into memory.

#include <string>

namespace bubblesim {

/// Reads the file at `path` into a string; InputError naming the path when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace bubblesim
