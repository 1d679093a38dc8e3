#pragma once
// YamlReader: typed, located access to a YAML document for input files (scenarios, topologies,
// sweeps). Every problem becomes a Diagnostic naming file:line:column, the key path, the bad
// value and what is allowed; nothing throws until the caller asks (DiagnosticList::throw_if_any),
// so one run reports every problem of a file.
//
// Usage:
//   YamlDocument doc = YamlDocument::load_file(path, diags);
//   MapReader top(doc.root(), diags, {"name", "pipeline", ...});
//   auto stages = top.integer("stages", 1, 1 << 20);
//   top.finish();  // unknown keys (with did-you-mean) and duplicate keys

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/diagnostics.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

/// A YAML node together with its file and dotted key path.
class YamlNode {
 public:
  YamlNode() = default;
  YamlNode(YAML::Node node, std::string file, std::string path)
      : node_(node), file_(std::move(file)), path_(std::move(path)) {}
  YamlNode(const YamlNode&) = default;
  YamlNode(YamlNode&&) = default;
  // YAML::Node::operator= writes through to the node it refers to (it would change the parsed
  // document); rebinding with reset() gives the value semantics a YamlNode needs.
  YamlNode& operator=(const YamlNode& other) {
    if (this != &other) {
      node_.reset(other.node_);
      fallback_mark_ = other.fallback_mark_;
      file_ = other.file_;
      path_ = other.path_;
    }
    return *this;
  }
  YamlNode& operator=(YamlNode&& other) { return *this = static_cast<const YamlNode&>(other); }
  ~YamlNode() = default;

  const YAML::Node& raw() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  SourceLocation location() const;
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_ || node_.IsNull(); }
  /// The scalar text, or a short description of a non-scalar ("a mapping", "a list").
  std::string describe() const;
  /// Elements of a sequence, with paths "path[i]".
  std::vector<YamlNode> elements() const;
  /// A child of a map without key checking (for generic walkers such as sweeps).
  YamlNode child(const std::string& key) const;

  // Scalar conversions: on failure add a diagnostic and return nullopt.
  std::optional<std::int64_t> as_integer(DiagnosticList& d, std::int64_t min,
                                         std::int64_t max) const;
  std::optional<double> as_real(DiagnosticList& d, double min, double max) const;
  std::optional<bool> as_boolean(DiagnosticList& d) const;
  std::optional<std::string> as_string(DiagnosticList& d) const;
  std::optional<std::string> as_choice(DiagnosticList& d,
                                       const std::vector<std::string>& choices) const;
  std::optional<Time> as_time(DiagnosticList& d) const;
  /// A duration within [min, max]; outside it the diagnostic names the range.
  std::optional<Time> as_time(DiagnosticList& d, Time min, Time max) const;
  std::optional<Bytes> as_bytes(DiagnosticList& d) const;
  std::optional<Bandwidth> as_bandwidth(DiagnosticList& d) const;
  std::optional<FlopRate> as_flop_rate(DiagnosticList& d) const;

  /// Adds a diagnostic located at this node.
  void error(DiagnosticList& d, std::string message) const;

  /// Where to point when the node itself has no useful position (an empty value such as
  /// `stages:` is located by yaml-cpp at the next token, so its key is used instead).
  void set_fallback_mark(const YAML::Mark& mark) { fallback_mark_ = mark; }

 private:
  YAML::Node node_;
  YAML::Mark fallback_mark_ = YAML::Mark::null_mark();
  std::string file_;
  std::string path_;
};

/// A parsed file. Syntax errors become diagnostics (with the parser's position).
class YamlDocument {
 public:
  /// Reads `path` with read_input_file (sim/units/text_file.h); `allow_stream` also accepts "-"
  /// (standard input), /dev/stdin and pipes.
  static YamlDocument load_file(const std::string& path, DiagnosticList& d,
                                bool allow_stream = false);
  static YamlDocument load_string(const std::string& text, const std::string& name,
                                  DiagnosticList& d);
  bool ok() const { return ok_; }
  YamlNode root() const { return YamlNode(root_, file_, ""); }

 private:
  YAML::Node root_;
  std::string file_;
  bool ok_ = false;
};

/// Reads one mapping: known keys by name, then `finish` reports unknown keys (with a did-you-mean
/// suggestion and the list of allowed keys) and duplicate keys.
class MapReader {
 public:
  /// If `node` is not a mapping, reports that once and behaves as an empty map.
  MapReader(const YamlNode& node, DiagnosticList& d, std::vector<std::string> allowed_keys);
  ~MapReader();
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  bool has(const std::string& key) const;
  std::optional<YamlNode> get(const std::string& key);
  /// Like get, but reports a missing key ("missing required key 'K'").
  std::optional<YamlNode> require(const std::string& key);

  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min, std::int64_t max);
  std::optional<double> real(const std::string& key, double min, double max);
  std::optional<bool> boolean(const std::string& key);
  std::optional<std::string> string(const std::string& key);
  std::optional<std::string> choice(const std::string& key,
                                    const std::vector<std::string>& choices);
  std::optional<Time> time(const std::string& key);
  std::optional<Bytes> bytes(const std::string& key);
  std::optional<Bandwidth> bandwidth(const std::string& key);
  std::optional<FlopRate> flop_rate(const std::string& key);

  const YamlNode& node() const { return node_; }
  /// What keys are called in messages ("unknown parameter 'x'"); "key" by default.
  void set_key_noun(std::string noun) { noun_ = std::move(noun); }
  /// Reports unknown and duplicate keys. Called by the destructor if not called before.
  void finish();

 private:
  YamlNode node_;
  DiagnosticList& diags_;
  std::vector<std::string> allowed_;
  std::string noun_ = "key";
  bool finished_ = false;
};

/// "a.b" joined; "" + "k" = "k".
std::string join_key_path(const std::string& parent, const std::string& key);

}  // namespace bubblesim
