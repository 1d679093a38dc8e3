#pragma once
// Registry: the generators known to one run of the tool (no global registry). The built-ins are
// added by builtin_registry() (schedules/builtin_generators.h), plugins by plugin_loader.h.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedules/generator.h"

namespace bubblesim {

class Registry final : public Registrar {
 public:
  void add(Generator generator) override;
  /// Registers through `fn`, labelling what it adds with `origin` (a plugin's path and version).
  /// All or nothing: when `fn` throws, everything it added is removed again and the exception
  /// propagates.
  void add_from(const std::function<void(Registrar&)>& fn, const std::string& origin);

  const Generator* find(const std::string& name) const;
  /// "unknown schedule 'NAME'; did you mean 'X'? (known: ...)" for a name find() does not know.
  std::string unknown_name_message(const std::string& name) const;
  /// Names in registration order.
  std::vector<std::string> names() const;
  /// "built-in" or the plugin file a generator came from.
  const std::string& origin(const std::string& name) const;

 private:
  std::vector<Generator> generators_;
  std::vector<std::string> origins_;
  std::map<std::string, std::size_t> index_;
  std::string current_origin_ = "built-in";
};

}  // namespace bubblesim
