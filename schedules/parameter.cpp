#include "schedules/parameter.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bubblesim {

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::Integer:
      return "integer";
    case ParamType::Real:
      return "real";
    case ParamType::Boolean:
      return "boolean";
    case ParamType::Choice:
      return "choice";
    case ParamType::Duration:
      return "duration";
    case ParamType::Size:
      return "size";
    case ParamType::Text:
      return "text";
  }
  return "?";
}

std::string to_string(const ParamValue& value) {
  struct Visitor {
    std::string operator()(std::int64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(Time v) const { return to_string(v); }
    std::string operator()(Bytes v) const { return to_string(v); }
  };
  return std::visit(Visitor{}, value);
}

ParamValues ParamValues::defaults(const std::vector<ParamSpec>& specs) {
  ParamValues values;
  for (const ParamSpec& spec : specs) {
    if (!spec.optional_default) values.set(spec.name, spec.default_value);
  }
  return values;
}

const ParamValue& ParamValues::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error(fmt::format("parameter '{}' has no value", name));
  return it->second;
}

template <typename T>
static const T& typed(const ParamValue& v, const std::string& name, const char* type) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::logic_error(fmt::format("parameter '{}' is not of type {}", name, type));
}

std::int64_t ParamValues::integer(const std::string& name) const {
  return typed<std::int64_t>(get(name), name, "integer");
}
double ParamValues::real(const std::string& name) const {
  const ParamValue& v = get(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return typed<double>(v, name, "real");
}
bool ParamValues::boolean(const std::string& name) const {
  return typed<bool>(get(name), name, "boolean");
}
const std::string& ParamValues::text(const std::string& name) const {
  return typed<std::string>(get(name), name, "text");
}
Time ParamValues::duration(const std::string& name) const {
  return typed<Time>(get(name), name, "duration");
}
Bytes ParamValues::size(const std::string& name) const {
  return typed<Bytes>(get(name), name, "size");
}

ParamSpec integer_param(std::string name, std::int64_t default_value, std::string help,
                        std::int64_t minimum) {
  ParamSpec spec{
      std::move(name), ParamType::Integer, default_value, std::move(help), {}, {}, false};
  spec.check = [minimum](const ParamValue& v) -> std::optional<std::string> {
    auto i = std::get<std::int64_t>(v);
    if (i < minimum) return fmt::format("must be at least {}", minimum);
    return std::nullopt;
  };
  return spec;
}

ParamSpec optional_integer_param(std::string name, std::string help, std::int64_t minimum) {
  ParamSpec spec = integer_param(std::move(name), 0, std::move(help), minimum);
  spec.optional_default = true;
  return spec;
}

ParamSpec boolean_param(std::string name, bool default_value, std::string help) {
  return ParamSpec{
      std::move(name), ParamType::Boolean, default_value, std::move(help), {}, {}, false};
}

ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help) {
  return ParamSpec{std::move(name),
                   ParamType::Choice,
                   std::move(default_value),
                   std::move(help),
                   std::move(choices),
                   {},
                   false};
}

}  // namespace bubblesim
