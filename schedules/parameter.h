#pragma once
// Generator parameters: each declares its name, type, default, help and check, so that
// `bubblesim explain NAME` can print them and scenario loading can validate user values.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

enum class ParamType { Integer, Real, Boolean, Choice, Duration, Size, Text };
std::string_view param_type_name(ParamType type);

using ParamValue = std::variant<std::int64_t, double, bool, std::string, Time, Bytes>;
std::string to_string(const ParamValue& value);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Integer;
  ParamValue default_value;  // a generator may leave a value "unset" with optional_default
  std::string help;
  std::vector<std::string> choices;  // for Choice
  /// Extra check on a well-typed value: returns a message saying what is allowed, or nullopt.
  std::function<std::optional<std::string>(const ParamValue&)> check;
  bool optional_default = false;  // no default: absent means "derive it" (e.g. g = p)
};

/// The values given to one generator, already typed and checked against its specs.
class ParamValues {
 public:
  /// The defaults of `specs` (a parameter without a default, "derived", stays absent).
  static ParamValues defaults(const std::vector<ParamSpec>& specs);
  void set(const std::string& name, ParamValue value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& text(const std::string& name) const;  // Choice and Text
  Time duration(const std::string& name) const;
  Bytes size(const std::string& name) const;
  const std::map<std::string, ParamValue>& all() const { return values_; }

 private:
  const ParamValue& get(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
};

/// Integer parameter with a minimum.
ParamSpec integer_param(std::string name, std::int64_t default_value, std::string help,
                        std::int64_t minimum);
/// Integer parameter with no default: absent means "derive it"; with a minimum.
ParamSpec optional_integer_param(std::string name, std::string help, std::int64_t minimum);
ParamSpec boolean_param(std::string name, bool default_value, std::string help);
ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help);

}  // namespace bubblesim
