#include "sim/units/text_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "sim/units/diagnostics.h"

namespace bubblesim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace bubblesim
