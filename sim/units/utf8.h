#pragma once
// UTF-8 well-formedness, for the checks on input text and for messages that echo input bytes;
// control characters made visible, for user strings that reach a terminal or a report.

#include <cstddef>
#include <string>
#include <string_view>

namespace bubblesim {

/// The length (1-4) of the well-formed UTF-8 sequence starting at text[at], or 0 when the byte
/// there does not start one (a stray continuation byte, an overlong form, a UTF-16 surrogate, a
/// code point above U+10FFFF or a sequence cut short).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

/// The code point of the well-formed sequence of `length` bytes at text[at].
char32_t utf8_code_point(std::string_view text, std::size_t at, std::size_t length);

/// A character that shows nothing but changes a name: the byte-order mark / zero-width no-break
/// space U+FEFF, zero-width spaces and joiners, bidirectional marks, embeddings, overrides and
/// isolates, the soft hyphen, invisible operators. Messages show them as \uXXXX.
bool is_invisible_format(char32_t c);

/// `text` without its invisible format characters (is_invisible_format).
std::string without_invisible(std::string_view text);

/// `text` with every control character (C0 such as ESC, BEL, CR; DEL; C1 such as U+009B) and
/// every byte that is not UTF-8 written as \xHH, so that it cannot drive a terminal, forge a
/// line of a report or break its format; newlines too unless `keep_newlines`. Well-formed UTF-8
/// is kept.
std::string visible_controls(std::string_view text, bool keep_newlines = false);

}  // namespace bubblesim
