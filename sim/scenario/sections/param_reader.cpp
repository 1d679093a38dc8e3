#include "sim/scenario/sections/param_reader.h"

#include <fmt/format.h>

#include <limits>

namespace bubblesim {

std::optional<ParamValue> read_param(const YamlNode& n, const ParamSpec& spec,
                                     DiagnosticList& diags) {
  constexpr auto lo = std::numeric_limits<std::int64_t>::min();
  constexpr auto hi = std::numeric_limits<std::int64_t>::max();
  std::optional<ParamValue> v;
  switch (spec.type) {
    case ParamType::Integer:
      if (auto x = n.as_integer(diags, lo, hi)) v = *x;
      break;
    case ParamType::Real:
      if (auto x = n.as_real(diags, -std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::max()))
        v = *x;
      break;
    case ParamType::Boolean:
      if (auto x = n.as_boolean(diags)) v = *x;
      break;
    case ParamType::Choice:
      if (auto x = n.as_choice(diags, spec.choices)) v = *x;
      break;
    case ParamType::Duration:
      if (auto x = n.as_time(diags)) v = *x;
      break;
    case ParamType::Size:
      if (auto x = n.as_bytes(diags)) v = *x;
      break;
    case ParamType::Text:
      if (auto x = n.as_string(diags)) v = *x;
      break;
  }
  if (v && spec.check) {
    if (std::optional<std::string> problem = spec.check(*v)) {
      n.error(diags, fmt::format("{} is not allowed: {}", n.describe(), *problem));
      return std::nullopt;
    }
  }
  return v;
}

}  // namespace bubblesim
