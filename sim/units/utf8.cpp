#include "sim/units/utf8.h"

#include <algorithm>

namespace bubblesim {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

char32_t utf8_code_point(std::string_view text, std::size_t at, std::size_t length) {
  const auto byte = [&](std::size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[i]));
  };
  if (length <= 1) return byte(at);
  static constexpr char32_t kLeadMask[5] = {0, 0, 0x1F, 0x0F, 0x07};
  char32_t c = byte(at) & kLeadMask[length];
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (byte(at + k) & 0x3F);
  return c;
}

bool is_invisible_format(char32_t c) {
  return c == 0x00AD || c == 0x061C || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x2064) ||
         (c >= 0x2066 && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB);
}

std::string without_invisible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = std::max<std::size_t>(1, utf8_sequence_length(text, i));
    if (length == 1 || !is_invisible_format(utf8_code_point(text, i, length)))
      out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string visible_controls(std::string_view text, bool keep_newlines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto u = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    const bool c0 = length == 1 && ((u < 0x20 && !(keep_newlines && u == '\n')) || u == 0x7f);
    const bool c1 = length == 2 && u == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (length == 0 || c0 || c1) {
      for (std::size_t k = 0; k < std::max<std::size_t>(length, 1); ++k) {
        const auto b = static_cast<unsigned char>(text[i + k]);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      i += std::max<std::size_t>(length, 1);
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

}  // namespace bubblesim
