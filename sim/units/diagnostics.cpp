#include "sim/units/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <numeric>
#include <string>

#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

// At most this many diagnostics are rendered: a broken file of a million cells would otherwise
// print a million lines (the first ones say what is wrong; the rest are counted).
constexpr std::size_t kMaxRendered = 50;

std::string render_all(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (std::size_t i = 0; i < ds.size() && i < kMaxRendered; ++i) {
    if (!out.empty()) out += '\n';
    out += ds[i].render();
  }
  if (ds.size() > kMaxRendered)
    out += fmt::format("\n... and {} more problems (the first {} are shown)",
                       ds.size() - kMaxRendered, kMaxRendered);
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Echoed values longer than this are shortened in messages (a 10 MB value is not printed).
constexpr std::size_t kMaxEchoed = 200;

// The first kMaxEchoed bytes of `s` (not cutting a UTF-8 character) and "…".
std::string shortened(const std::string& s) {
  if (s.size() <= kMaxEchoed) return s;
  std::size_t cut = kMaxEchoed;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "\u2026";
}

// An apostrophe inside a word ("the GPU's peak"), not a quote around a value.
bool is_apostrophe(const std::string& s, std::size_t at) {
  auto letter = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  return at > 0 && at + 1 < s.size() && letter(s[at - 1]) && letter(s[at + 1]);
}

// Every quoted value ('...') longer than kMaxEchoed shortened, its newlines written \x0a.
std::string shorten_quoted(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t open = s.find('\'', i);
    if (open == std::string::npos) break;
    if (is_apostrophe(s, open)) {
      out += s.substr(i, open + 1 - i);
      i = open + 1;
      continue;
    }
    std::size_t close = s.find('\'', open + 1);
    std::size_t end = close == std::string::npos ? s.size() : close;
    std::string value = s.substr(open + 1, end - open - 1);
    out += s.substr(i, open + 1 - i);
    if (close != std::string::npos) {
      // A value's newline is the user's, not the message's: shown, not obeyed.
      for (std::size_t at = value.find('\n'); at != std::string::npos; at = value.find('\n', at))
        value.replace(at, 1, "\\x0a");
      out += shortened(value);
    } else {
      out += value.find('\n') == std::string::npos ? shortened(value) : value;
    }
    i = end;
    if (close != std::string::npos) {
      out += '\'';
      i = close + 1;
    }
  }
  return out + s.substr(std::min(i, s.size()));
}

// Control characters (terminal escape sequences included, C1 controls such as U+009B too) and
// bytes that are not UTF-8 as \xHH; invisible format characters (a byte-order mark inside a key,
// bidirectional overrides) as \uXXXX; other well-formed UTF-8 is kept. A newline stays (a message
// may list its problems one per line) but every line after it is indented: no line of a message
// can start where a diagnostic of its own starts, at its file name.
std::string escape_controls(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto u = static_cast<unsigned char>(s[i]);
    const std::size_t length = utf8_sequence_length(s, i);
    const bool c0 = length == 1 && ((u < 0x20 && u != '\n') || u == 0x7f);
    const bool c1 = length == 2 && u == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
    if (length == 0 || c0 || c1) {
      for (std::size_t k = 0; k < std::max<std::size_t>(length, 1); ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      }
      i += std::max<std::size_t>(length, 1);
    } else if (length > 1 && is_invisible_format(utf8_code_point(s, i, length))) {
      out += fmt::format("\\u{:04X}", static_cast<std::uint32_t>(utf8_code_point(s, i, length)));
      i += length;
    } else {
      out.append(s, i, length);
      i += length;
      if (u == '\n' && i < s.size() && s[i] != ' ') out += "  ";
    }
  }
  return out;
}

}  // namespace

std::string Diagnostic::render() const {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) out += fmt::format(":{}:{}", where.line, where.column);
    out += ": ";
  }
  out += "error: ";
  if (!key_path.empty()) out += shortened(key_path) + ": ";
  out += shorten_quoted(message);
  return escape_controls(out);
}

void DiagnosticList::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_);
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(render_all(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(const std::string& message)
    : InputError(std::vector<Diagnostic>{Diagnostic{{}, {}, message}}) {}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace bubblesim
