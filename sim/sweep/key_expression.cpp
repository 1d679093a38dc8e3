#include "sim/sweep/key_expression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace bubblesim {

struct KeyExpression::Node {
  enum class Kind { Number, Name, Negate, Not, Binary };
  Kind kind = Kind::Number;
  double number = 0;     // Number
  std::size_t slot = 0;  // Name: index into names()
  std::string op;        // Binary: + - * / % == != < <= > >= and or
  std::unique_ptr<Node> left, right;
};

namespace {

using Node = KeyExpression::Node;

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Recursive descent, lowest precedence first: or, and, not, comparison, sum, product, unary.
class Parser {
 public:
  Parser(const std::string& text, std::vector<std::string>& names) : text_(text), names_(names) {}

  std::unique_ptr<Node> parse() {
    std::unique_ptr<Node> root = disjunction();
    skip_space();
    if (at_ < text_.size())
      throw KeyExpressionError(fmt::format("unexpected '{}'", text_.substr(at_, 12)), at_);
    return root;
  }

 private:
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
  }
  // The word operators match whole words only ("order" is a name, not "or" + "der").
  bool take(const std::string& token) {
    skip_space();
    if (text_.compare(at_, token.size(), token) != 0) return false;
    if (name_start(token[0]) && at_ + token.size() < text_.size() &&
        name_char(text_[at_ + token.size()]))
      return false;
    at_ += token.size();
    return true;
  }
  static std::unique_ptr<Node> binary(std::string op, std::unique_ptr<Node> l,
                                      std::unique_ptr<Node> r) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::Binary;
    n->op = std::move(op);
    n->left = std::move(l);
    n->right = std::move(r);
    return n;
  }
  std::unique_ptr<Node> disjunction() {
    std::unique_ptr<Node> n = conjunction();
    while (take("or") || take("||")) n = binary("or", std::move(n), conjunction());
    return n;
  }
  std::unique_ptr<Node> conjunction() {
    std::unique_ptr<Node> n = negation();
    while (take("and") || take("&&")) n = binary("and", std::move(n), negation());
    return n;
  }
  std::unique_ptr<Node> negation() {
    skip_space();
    // "!=" is a comparison, never a negation.
    if (take("not") || (text_.compare(at_, 2, "!=") != 0 && take("!"))) {
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Not;
      n->left = negation();
      return n;
    }
    return comparison();
  }
  std::unique_ptr<Node> comparison() {
    std::unique_ptr<Node> n = sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (take(op)) return binary(op, std::move(n), sum());
    }
    skip_space();
    if (at_ < text_.size() && text_[at_] == '=')
      throw KeyExpressionError("'=' is not a comparison: write '=='", at_);
    return n;
  }
  std::unique_ptr<Node> sum() {
    std::unique_ptr<Node> n = product();
    while (true) {
      if (take("+"))
        n = binary("+", std::move(n), product());
      else if (take("-"))
        n = binary("-", std::move(n), product());
      else
        return n;
    }
  }
  std::unique_ptr<Node> product() {
    std::unique_ptr<Node> n = unary();
    while (true) {
      if (take("*"))
        n = binary("*", std::move(n), unary());
      else if (take("/"))
        n = binary("/", std::move(n), unary());
      else if (take("%"))
        n = binary("%", std::move(n), unary());
      else
        return n;
    }
  }
  std::unique_ptr<Node> unary() {
    if (take("-")) {
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Negate;
      n->left = unary();
      return n;
    }
    return primary();
  }
  std::unique_ptr<Node> primary() {
    skip_space();
    if (at_ >= text_.size()) throw KeyExpressionError("the expression ends too early", at_);
    const char c = text_[at_];
    if (c == '(') {
      const std::size_t open = at_++;
      std::unique_ptr<Node> n = disjunction();
      if (!take(")")) throw KeyExpressionError("'(' is never closed", open);
      return n;
    }
    auto n = std::make_unique<Node>();
    if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.') {
      const char* begin = text_.c_str() + at_;
      char* end = nullptr;
      n->number = std::strtod(begin, &end);
      if (end == begin) throw KeyExpressionError("expected a number", at_);
      at_ += static_cast<std::size_t>(end - begin);
      if (at_ < text_.size() && name_start(text_[at_])) {
        throw KeyExpressionError(
            fmt::format("'{}' is not a plain number (units are not allowed in constraints)",
                        text_.substr(begin - text_.c_str(), end - begin + 1)),
            static_cast<std::size_t>(begin - text_.c_str()));
      }
      return n;
    }
    if (name_start(c)) {
      const std::size_t start = at_;
      while (at_ < text_.size() && name_char(text_[at_])) ++at_;
      std::string name = text_.substr(start, at_ - start);
      if (name.back() == '.' || name.find("..") != std::string::npos)
        throw KeyExpressionError(fmt::format("'{}' is not a key path", name), start);
      if (name == "and" || name == "or" || name == "not")
        throw KeyExpressionError(fmt::format("'{}' needs a value before it", name), start);
      n->kind = Node::Kind::Name;
      const auto found = std::find(names_.begin(), names_.end(), name);
      n->slot = static_cast<std::size_t>(found - names_.begin());
      if (found == names_.end()) names_.push_back(std::move(name));
      return n;
    }
    throw KeyExpressionError(fmt::format("unexpected '{}'", std::string(1, c)), at_);
  }

  const std::string& text_;
  std::vector<std::string>& names_;
  std::size_t at_ = 0;
};

double evaluate_node(const Node& n, const std::vector<double>& values) {
  switch (n.kind) {
    case Node::Kind::Number:
      return n.number;
    case Node::Kind::Name:
      return values[n.slot];
    case Node::Kind::Negate:
      return -evaluate_node(*n.left, values);
    case Node::Kind::Not: {
      const double v = evaluate_node(*n.left, values);
      return std::isnan(v) ? v : v == 0.0 ? 1.0 : 0.0;
    }
    case Node::Kind::Binary:
      break;
  }
  const double a = evaluate_node(*n.left, values);
  // `and` / `or` short-circuit, so that `x != 0 and y / x > 2` never divides by zero.
  if (n.op == "and" || n.op == "or") {
    if (std::isnan(a)) return a;
    if ((n.op == "and") != (a != 0.0)) return n.op == "or" ? 1.0 : 0.0;
    const double b = evaluate_node(*n.right, values);
    return std::isnan(b) ? b : b != 0.0 ? 1.0 : 0.0;
  }
  const double b = evaluate_node(*n.right, values);
  // A division by zero stays NaN through every operator, so the caller can tell it from false.
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const char first = n.op[0];
  if (n.op.size() == 1 && first == '+') return a + b;
  if (n.op.size() == 1 && first == '-') return a - b;
  if (n.op.size() == 1 && first == '*') return a * b;
  if (first == '/') return b == 0.0 ? std::numeric_limits<double>::quiet_NaN() : a / b;
  if (first == '%') return b == 0.0 ? std::numeric_limits<double>::quiet_NaN() : std::fmod(a, b);
  // Comparisons of integers given as decimals (4.0 == 4) are exact; others compare as doubles.
  if (n.op == "==") return a == b ? 1.0 : 0.0;
  if (n.op == "!=") return a != b ? 1.0 : 0.0;
  if (n.op == "<=") return a <= b ? 1.0 : 0.0;
  if (n.op == ">=") return a >= b ? 1.0 : 0.0;
  if (n.op == "<") return a < b ? 1.0 : 0.0;
  return a > b ? 1.0 : 0.0;
}

}  // namespace

KeyExpression::KeyExpression(const std::string& text) : text_(text) {
  root_ = Parser(text_, names_).parse();
}
KeyExpression::~KeyExpression() = default;
KeyExpression::KeyExpression(KeyExpression&&) noexcept = default;
KeyExpression& KeyExpression::operator=(KeyExpression&&) noexcept = default;

double KeyExpression::evaluate(const std::vector<double>& values) const {
  return evaluate_node(*root_, values);
}

}  // namespace bubblesim
