#include "schedules/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "sim/units/diagnostics.h"

namespace bubblesim {

void Registry::add(Generator generator) {
  const std::string& name = generator.info.name;
  if (name.empty()) throw std::invalid_argument("a generator needs a name");
  if (!generator.generate)
    throw std::invalid_argument(fmt::format("generator '{}' has no generate function", name));
  if (auto it = index_.find(name); it != index_.end()) {
    throw std::invalid_argument(fmt::format(
        "a generator named '{}' is already registered (from {})", name, origins_[it->second]));
  }
  index_.emplace(name, generators_.size());
  generators_.push_back(std::move(generator));
  origins_.push_back(current_origin_);
}

void Registry::add_from(const std::function<void(Registrar&)>& fn, const std::string& origin) {
  // All or nothing: if registration throws (a colliding name, a plugin's own error), remove what
  // this call added so the registry is as before.
  const std::size_t before = generators_.size();
  std::string saved = current_origin_;
  current_origin_ = origin;
  try {
    fn(*this);
  } catch (...) {
    current_origin_ = saved;
    for (std::size_t i = before; i < generators_.size(); ++i)
      index_.erase(generators_[i].info.name);
    generators_.resize(before);
    origins_.resize(before);
    throw;
  }
  current_origin_ = saved;
}

const Generator* Registry::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &generators_[it->second];
}

std::string Registry::unknown_name_message(const std::string& name) const {
  const std::vector<std::string> known = names();
  const std::string hint = closest_match(name, known);
  return fmt::format("unknown schedule '{}'{} (known: {})", name,
                     hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint),
                     fmt::join(known, ", "));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(generators_.size());
  for (const auto& g : generators_) out.push_back(g.info.name);
  return out;
}

const std::string& Registry::origin(const std::string& name) const {
  return origins_.at(index_.at(name));
}

}  // namespace bubblesim
