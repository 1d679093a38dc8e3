#pragma once
// UTF-8 well-formedness, for the checks on input text and for messages that echo input bytes.

#include <cstddef>
#include <string_view>

namespace bubblesim {

/// The length (1-4) of the well-formed UTF-8 sequence starting at text[at], or 0 when the byte
/// there does not start one (a stray continuation byte, an overlong form, a UTF-16 surrogate, a
/// code point above U+10FFFF or a sequence cut short).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

}  // namespace bubblesim
