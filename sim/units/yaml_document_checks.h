#pragma once
// Checks on a YAML input's text that yaml-cpp does not make: a NUL byte (yaml-cpp would cut the
// value at it silently) and a second document (yaml-cpp's Load ignores it). Used by YamlDocument.

#include <optional>
#include <string>

#include "sim/units/diagnostics.h"

namespace bubblesim {

/// Where the first NUL byte of `text` is, or nullopt when there is none.
std::optional<SourceLocation> find_nul_byte(const std::string& text, const std::string& file);

/// Where a second YAML document of `text` starts, or nullopt when there is one document.
std::optional<SourceLocation> find_second_document(const std::string& text,
                                                   const std::string& file);

}  // namespace bubblesim
