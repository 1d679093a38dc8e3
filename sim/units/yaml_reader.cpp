#include "sim/units/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

#include "sim/units/quantity_parser.h"
#include "sim/units/text_file.h"
#include "sim/units/text_trim.h"
#include "sim/units/utf8.h"
#include "sim/units/yaml_document_checks.h"

namespace bubblesim {
namespace {

// Input files are small; these limits keep a hostile or broken file from exhausting memory or the
// stack (yaml-cpp's parser recurses once per nesting level).
constexpr std::size_t kMaxFileBytes = kMaxInputFileBytes;
constexpr int kMaxNesting = 64;

SourceLocation location_of(const YAML::Mark& m, const std::string& file) {
  SourceLocation where{file, 0, 0};
  if (!m.is_null() && m.line >= 0 && m.column >= 0) {
    where.line = m.line + 1;
    where.column = m.column + 1;
  }
  return where;
}

/// The value of a map entry, located at its key when the value is empty.
YamlNode entry_value(const YAML::Node& key, const YAML::Node& value, const std::string& file,
                     const std::string& path) {
  YamlNode n(value, file, path);
  n.set_fallback_mark(key.Mark());
  return n;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

/// "'eight'" for a scalar, "a list" / "a mapping" / "an empty value" otherwise.
std::string got(const YamlNode& n) {
  if (n.is_scalar() && !n.is_null()) return fmt::format("'{}'", n.raw().Scalar());
  return n.describe();
}

bool starts_token(char previous) {
  return previous == ' ' || previous == '\t' || previous == '[' || previous == '{' ||
         previous == ',' || previous == ':' || previous == '-';
}

/// The deepest nesting of the text, found without recursion: block indentation levels, "- "
/// sequence entries opened on one line and flow brackets. Quoted text and comments are skipped.
/// Returns the 1-based line where the limit is first exceeded, or 0.
int find_excessive_nesting(std::string_view text, int limit) {
  std::vector<std::size_t> indents;  // open block levels by indentation
  int flow = 0;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;

    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    std::string_view rest = line.substr(indent);
    bool blank = trim_whitespace(rest).empty() || rest.front() == '#';
    int inline_levels = 0;
    if (!blank && flow == 0) {
      while (!indents.empty() && indents.back() > indent) indents.pop_back();
      if (indents.empty() || indents.back() < indent) indents.push_back(indent);
      // "- - - x" opens one sequence per dash on the same line.
      std::size_t i = 0;
      while (i + 1 < rest.size() && rest[i] == '-' && rest[i + 1] == ' ') {
        ++inline_levels;
        i += 2;
        while (i < rest.size() && rest[i] == ' ') ++i;
      }
    }
    char quote = 0;
    char previous = ' ';
    for (char c : rest) {
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '#' && (previous == ' ' || previous == '\t')) {
        break;
      } else if ((c == '"' || c == '\'') && starts_token(previous)) {
        quote = c;
      } else if (c == '[' || c == '{') {
        ++flow;
        if (static_cast<int>(indents.size()) + inline_levels + flow > limit) return line_no;
      } else if (c == ']' || c == '}') {
        if (flow > 0) --flow;
      }
      previous = c;
    }
    if (static_cast<int>(indents.size()) + inline_levels + flow > limit) return line_no;
    if (end == text.size()) break;
  }
  return 0;
}

bool parse_int64(std::string_view s, std::int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

template <typename T, typename Parse>
std::optional<T> as_quantity(const YamlNode& n, DiagnosticList& d, std::string_view what,
                             Parse parse) {
  if (!n.is_scalar() || n.is_null()) {
    n.error(d, fmt::format("expected {}, got {}", what, n.describe()));
    return std::nullopt;
  }
  try {
    return parse(n.raw().Scalar());
  } catch (const QuantityError& e) {
    n.error(d, e.what());
    return std::nullopt;
  }
}

/// Whether `inside`; if not, reports the node's value as outside [min, max] (as written there).
bool within(const YamlNode& n, DiagnosticList& d, bool inside, const auto& min, const auto& max) {
  if (!inside)
    n.error(d, fmt::format("{} is out of range (allowed: {} to {})",
                           trim_whitespace(n.raw().Scalar()), min, max));
  return inside;
}
}  // namespace

std::string join_key_path(const std::string& parent, const std::string& key) {
  if (parent.empty()) return key;
  if (key.empty()) return parent;
  return parent + "." + key;
}

// ---------------------------------------------------------------------------------------------
// YamlNode

SourceLocation YamlNode::location() const {
  bool empty = !node_ || node_.IsNull();
  if (empty && !fallback_mark_.is_null()) return location_of(fallback_mark_, file_);
  return node_ ? location_of(node_.Mark(), file_) : location_of(fallback_mark_, file_);
}

std::string YamlNode::describe() const {
  if (!node_ || node_.IsNull()) return "an empty value";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  return node_.Scalar();
}

std::vector<YamlNode> YamlNode::elements() const {
  std::vector<YamlNode> out;
  if (!node_.IsSequence()) return out;
  std::size_t i = 0;
  for (const YAML::Node& e : node_) {
    out.emplace_back(e, file_, fmt::format("{}[{}]", path_, i));
    ++i;
  }
  return out;
}

YamlNode YamlNode::child(const std::string& key) const {
  if (node_.IsMap()) {
    for (const auto& kv : node_) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) {
        return entry_value(kv.first, kv.second, file_, join_key_path(path_, key));
      }
    }
  }
  return YamlNode(YAML::Node(), file_, join_key_path(path_, key));
}

void YamlNode::error(DiagnosticList& d, std::string message) const {
  d.add(location(), path_, std::move(message));
}

std::optional<std::int64_t> YamlNode::as_integer(DiagnosticList& d, std::int64_t min,
                                                 std::int64_t max) const {
  std::int64_t v = 0;
  if (!is_scalar() || is_null() || !parse_int64(trim_whitespace(node_.Scalar()), v)) {
    error(d, fmt::format("expected an integer, got {}", got(*this)));
    return std::nullopt;
  }
  if (!within(*this, d, v >= min && v <= max, min, max)) return std::nullopt;
  return v;
}

std::optional<double> YamlNode::as_real(DiagnosticList& d, double min, double max) const {
  double v = 0.0;
  if (!is_scalar() || is_null() || !parse_double(trim_whitespace(node_.Scalar()), v)) {
    error(d, fmt::format("expected a number, got {}", got(*this)));
    return std::nullopt;
  }
  if (!within(*this, d, v >= min && v <= max, min, max)) return std::nullopt;
  return v;
}

std::optional<bool> YamlNode::as_boolean(DiagnosticList& d) const {
  if (is_scalar() && !is_null()) {
    const std::string& s = node_.Scalar();
    // Only the YAML 1.2 spellings: yes/no/on/off/0/1 are easy to misread.
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  error(d, fmt::format("expected true or false, got {}", got(*this)));
  return std::nullopt;
}

std::optional<std::string> YamlNode::as_string(DiagnosticList& d) const {
  if (!is_scalar() || is_null()) {
    error(d, fmt::format("expected a string, got {}", describe()));
    return std::nullopt;
  }
  return node_.Scalar();
}

std::optional<std::string> YamlNode::as_choice(DiagnosticList& d,
                                               const std::vector<std::string>& choices) const {
  if (!is_scalar() || is_null()) {
    error(d, fmt::format("expected one of {}, got {}", join_list(choices), describe()));
    return std::nullopt;
  }
  const std::string& s = node_.Scalar();
  for (const std::string& c : choices) {
    if (c == s) return s;
  }
  std::string suggestion = closest_match(s, choices);
  error(d, fmt::format("'{}' is not allowed{} (allowed: {})", s,
                       suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                       join_list(choices)));
  return std::nullopt;
}

std::optional<Time> YamlNode::as_time(DiagnosticList& d) const {
  return as_quantity<Time>(*this, d, "a duration",
                           [](const std::string& s) { return parse_time(s); });
}
std::optional<Time> YamlNode::as_time(DiagnosticList& d, Time min, Time max) const {
  const std::optional<Time> t = as_time(d);
  const std::string low = min == Time::zero() ? std::string("0") : to_string(min);
  return t && within(*this, d, *t >= min && *t <= max, low, max) ? t : std::nullopt;
}
std::optional<Bytes> YamlNode::as_bytes(DiagnosticList& d) const {
  return as_quantity<Bytes>(*this, d, "a size",
                            [](const std::string& s) { return parse_bytes(s); });
}
std::optional<Bandwidth> YamlNode::as_bandwidth(DiagnosticList& d) const {
  return as_quantity<Bandwidth>(*this, d, "a bandwidth",
                                [](const std::string& s) { return parse_bandwidth(s); });
}
std::optional<FlopRate> YamlNode::as_flop_rate(DiagnosticList& d) const {
  return as_quantity<FlopRate>(*this, d, "a compute rate",
                               [](const std::string& s) { return parse_flop_rate(s); });
}

// ---------------------------------------------------------------------------------------------
// YamlDocument

YamlDocument YamlDocument::load_file(const std::string& path, DiagnosticList& d,
                                     bool allow_stream) {
  std::string text;
  if (auto problem = read_input_file(
          path, text, allow_stream ? InputSource::file_or_stream : InputSource::file)) {
    d.add(SourceLocation{path, 0, 0}, "", *problem);
    YamlDocument doc;
    doc.file_ = path;
    return doc;
  }
  return load_string(text, path, d);
}

YamlDocument YamlDocument::load_string(const std::string& input, const std::string& name,
                                       DiagnosticList& d) {
  // A byte-order mark at the start says the file is UTF-8 (editors on Windows write one): drop
  // it. One anywhere else is part of a name and is reported there.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  const std::string text = input.rfind(kBom, 0) == 0 ? input.substr(kBom.size()) : input;
  YamlDocument doc;
  doc.file_ = name;
  if (text.size() > kMaxFileBytes) {
    d.add(SourceLocation{name, 0, 0}, "",
          fmt::format("the file is too large ({} bytes; input files are limited to 16 MiB)",
                      text.size()));
    return doc;
  }
  if (int line = find_excessive_nesting(text, kMaxNesting); line > 0) {
    d.add(SourceLocation{name, line, 1}, "",
          fmt::format(
              "the YAML is nested deeper than {} levels; input files are limited to that depth",
              kMaxNesting));
    return doc;
  }
  if (std::optional<SourceLocation> nul = find_nul_byte(text, name)) {
    d.add(*nul, "", "the file contains a NUL byte (input files are text)");
    return doc;
  }
  if (std::optional<InvalidUtf8> bad = find_invalid_utf8(text, name)) {
    d.add(bad->where, "",
          fmt::format("byte 0x{:02X} is not UTF-8 (input files are UTF-8 text; save the file as "
                      "UTF-8)",
                      bad->byte));
    return doc;
  }
  try {
    doc.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceLocation where{name, 0, 0};
    if (!e.mark.is_null()) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    d.add(where, "", e.msg);
    return doc;
  }
  if (!doc.root_ || doc.root_.IsNull()) {
    d.add(SourceLocation{name, 0, 0}, "", "the file is empty");
    return doc;
  }
  if (std::optional<SourceLocation> second = find_second_document(text, name)) {
    d.add(*second, "",
          "a second YAML document ('---'); an input file holds one document: remove it or split "
          "the file");
    return doc;
  }
  doc.ok_ = true;
  return doc;
}

// ---------------------------------------------------------------------------------------------
// MapReader

MapReader::MapReader(const YamlNode& node, DiagnosticList& d, std::vector<std::string> allowed_keys)
    : node_(node), diags_(d), allowed_(std::move(allowed_keys)) {
  if (!node_.is_map()) {
    node_.error(diags_, fmt::format("expected a mapping, got {}", got(node_)));
    finished_ = true;  // nothing to check: behaves as an empty map
  }
}

MapReader::~MapReader() {
  // finish() only adds diagnostics; guard anyway so a destructor never throws.
  try {
    finish();
  } catch (...) {
  }
}

bool MapReader::has(const std::string& key) const {
  if (!node_.is_map()) return false;
  for (const auto& kv : node_.raw()) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return true;
  }
  return false;
}

std::optional<YamlNode> MapReader::get(const std::string& key) {
  if (!node_.is_map()) return std::nullopt;
  for (const auto& kv : node_.raw()) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) {
      return entry_value(kv.first, kv.second, node_.file(), join_key_path(node_.path(), key));
    }
  }
  return std::nullopt;
}

std::optional<YamlNode> MapReader::require(const std::string& key) {
  std::optional<YamlNode> n = get(key);
  if (n || !node_.is_map()) return n;
  // A misspelling of `key` is reported by finish() with a did-you-mean; saying "missing" as
  // well would only repeat it.
  for (const auto& kv : node_.raw()) {
    if (!kv.first.IsScalar()) continue;
    const std::string& given = kv.first.Scalar();
    bool known = false;
    for (const std::string& a : allowed_) known = known || a == given;
    if (!known && closest_match(given, allowed_) == key) return n;
  }
  node_.error(diags_, fmt::format("missing required key '{}'", key));
  return n;
}

std::optional<std::int64_t> MapReader::integer(const std::string& key, std::int64_t min,
                                               std::int64_t max) {
  auto n = get(key);
  return n ? n->as_integer(diags_, min, max) : std::nullopt;
}
std::optional<double> MapReader::real(const std::string& key, double min, double max) {
  auto n = get(key);
  return n ? n->as_real(diags_, min, max) : std::nullopt;
}
std::optional<bool> MapReader::boolean(const std::string& key) {
  auto n = get(key);
  return n ? n->as_boolean(diags_) : std::nullopt;
}
std::optional<std::string> MapReader::string(const std::string& key) {
  auto n = get(key);
  return n ? n->as_string(diags_) : std::nullopt;
}
std::optional<std::string> MapReader::choice(const std::string& key,
                                             const std::vector<std::string>& choices) {
  auto n = get(key);
  return n ? n->as_choice(diags_, choices) : std::nullopt;
}
std::optional<Time> MapReader::time(const std::string& key) {
  auto n = get(key);
  return n ? n->as_time(diags_) : std::nullopt;
}
std::optional<Bytes> MapReader::bytes(const std::string& key) {
  auto n = get(key);
  return n ? n->as_bytes(diags_) : std::nullopt;
}
std::optional<Bandwidth> MapReader::bandwidth(const std::string& key) {
  auto n = get(key);
  return n ? n->as_bandwidth(diags_) : std::nullopt;
}
std::optional<FlopRate> MapReader::flop_rate(const std::string& key) {
  auto n = get(key);
  return n ? n->as_flop_rate(diags_) : std::nullopt;
}

void MapReader::finish() {
  if (finished_) return;
  finished_ = true;
  struct Seen {
    std::string key;
    int line;
  };
  std::vector<Seen> seen;
  for (const auto& kv : node_.raw()) {
    YamlNode key_node(kv.first, node_.file(), node_.path());
    if (!kv.first.IsScalar()) {
      key_node.error(diags_, fmt::format("expected a key name, got {}", key_node.describe()));
      continue;
    }
    const std::string& key = kv.first.Scalar();
    YamlNode located(kv.first, node_.file(), join_key_path(node_.path(), key));
    bool duplicate = false;
    for (const Seen& s : seen) {
      if (s.key == key) {
        located.error(
            diags_, fmt::format("duplicate {} '{}' (first given at line {})", noun_, key, s.line));
        duplicate = true;
        break;
      }
    }
    if (duplicate) continue;
    seen.push_back({key, located.location().line});
    bool known = false;
    for (const std::string& a : allowed_) known = known || a == key;
    if (!known && without_invisible(key) != key) {  // a byte-order mark inside a key, say
      const std::string visible = without_invisible(key);
      const bool allowed = std::find(allowed_.begin(), allowed_.end(), visible) != allowed_.end();
      located.error(diags_,
                    fmt::format("{} '{}' holds an invisible character (shown as \\u and "
                                "its code point){}: delete it",
                                noun_, key,
                                allowed ? fmt::format("; without it the {} is '{}'", noun_, visible)
                                        : std::string()));
      continue;
    }
    if (!known) {
      std::string suggestion = closest_match(key, allowed_);
      std::string allowed = allowed_.empty() ? fmt::format("(no {}s are allowed here)", noun_)
                                             : fmt::format("(allowed: {})", join_list(allowed_));
      located.error(
          diags_,
          fmt::format("unknown {} '{}'{} {}", noun_, key,
                      suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                      allowed));
    }
  }
}

}  // namespace bubblesim
