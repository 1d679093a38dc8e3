#pragma once
// Input diagnostics: every problem found in a user's file, with where it is and what is allowed.
//
// A validation pass collects all problems into a DiagnosticList and throws InputError once at the
// end, so the user sees every mistake of a file in one run (like a compiler). Only `main` turns an
// InputError into exit code 2.

#include <stdexcept>
#include <string>
#include <vector>

namespace bubblesim {

/// A position in a source file; line and column are 1-based (0 = unknown).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  SourceLocation where;
  std::string key_path;  // dotted path of the offending key, e.g. "pipeline.stages"; may be empty
  std::string message;   // names the bad value and what is allowed

  /// "FILE:LINE:COL: error: KEY: MESSAGE" (parts that are unknown are left out).
  std::string render() const;
};

class DiagnosticList {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void add(SourceLocation where, std::string key_path, std::string message) {
    items_.push_back({std::move(where), std::move(key_path), std::move(message)});
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Throws InputError carrying every diagnostic collected so far, if there is any.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

/// Bad user input. what() is every diagnostic rendered, one per line.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  /// A single diagnostic without a file position (e.g. a bad command-line value).
  explicit InputError(const std::string& message);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// The candidate `word` is the stem of (`h100` -> `h100-sxm`) when exactly one is; "" when several
/// are (`a100`: which one is meant is the user's choice); else the closest by edit distance, or ""
/// when none is close enough to suggest.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace bubblesim
