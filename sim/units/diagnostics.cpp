#include "sim/units/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
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

// Every quoted value ('...', on one line) longer than kMaxEchoed shortened.
std::string shorten_quoted(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t open = s.find('\'', i);
    if (open == std::string::npos) break;
    std::size_t close = s.find('\'', open + 1);
    std::size_t end = close == std::string::npos ? s.size() : close;
    std::string value = s.substr(open + 1, end - open - 1);
    out += s.substr(i, open + 1 - i);
    out += value.find('\n') == std::string::npos ? shortened(value) : value;
    i = end;
    if (close != std::string::npos) {
      out += '\'';
      i = close + 1;
    }
  }
  return out + s.substr(std::min(i, s.size()));
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
  return visible_controls(out, true);
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
