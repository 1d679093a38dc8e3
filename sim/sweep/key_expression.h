#pragma once
// KeyExpression: a small arithmetic and comparison expression over a scenario's key paths, the
// `constraints:` of a sweep file (docs/sweep-files.md), e.g.
//
//   parallelism.tp * pipeline.stages * parallelism.dp == 256
//   pipeline.microbatches >= 2 * pipeline.stages and parallelism.tp <= 8
//
// Numbers (integers or decimals), names (dotted key paths: `parallelism.tp`, or a short name the
// caller resolves), + - * / % (floating-point remainder), parentheses, the comparisons == != < <=
// > >=, and `and`, `or`, `not` (also && || !). A comparison is 1 when true and 0 when false;
// anything non-zero is true. Parsed once into a tree whose names the caller binds to slots, then
// evaluated per point without allocating.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubblesim {

/// A syntax error: what is wrong and at which character (0-based) of the expression.
class KeyExpressionError : public std::runtime_error {
 public:
  KeyExpressionError(const std::string& message, std::size_t offset)
      : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

class KeyExpression {
 public:
  /// Parses `text` (throws KeyExpressionError).
  explicit KeyExpression(const std::string& text);
  ~KeyExpression();
  KeyExpression(KeyExpression&&) noexcept;
  KeyExpression& operator=(KeyExpression&&) noexcept;

  const std::string& text() const { return text_; }
  /// The distinct names it uses, in order of first use; evaluate() takes their values in this
  /// order.
  const std::vector<std::string>& names() const { return names_; }
  /// The value with names()[i] = values[i]. NaN where it divides by zero.
  double evaluate(const std::vector<double>& values) const;

  struct Node;

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::unique_ptr<Node> root_;
};

}  // namespace bubblesim
