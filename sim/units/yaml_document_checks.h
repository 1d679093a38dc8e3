#pragma once
// Checks on an input's text that yaml-cpp does not make: a NUL byte (yaml-cpp would cut the
// value at it silently), bytes that are not UTF-8 (yaml-cpp passes them through into names that
// the JSON report cannot hold) and a second document (yaml-cpp's Load ignores it). Used by
// YamlDocument and the CSV readers.

#include <optional>
#include <string>

#include "sim/units/diagnostics.h"

namespace bubblesim {

/// Where the first NUL byte of `text` is, or nullopt when there is none.
std::optional<SourceLocation> find_nul_byte(const std::string& text, const std::string& file);

/// The first byte that does not start or continue a well-formed UTF-8 sequence (overlong forms,
/// surrogates and code points above U+10FFFF included): where it is and its value.
struct InvalidUtf8 {
  SourceLocation where;
  unsigned char byte = 0;
};
std::optional<InvalidUtf8> find_invalid_utf8(const std::string& text, const std::string& file);

/// Where a second YAML document of `text` starts, or nullopt when there is one document.
std::optional<SourceLocation> find_second_document(const std::string& text,
                                                   const std::string& file);

}  // namespace bubblesim
