#pragma once
// What `bubblesim list` and `bubblesim explain NAME` (without a scenario) print: the known
// schedules, and one schedule's description and parameters.

#include <string>

#include "schedules/registry.h"

namespace bubblesim {

/// A table of every registered schedule: name, placement, origin, description; the description
/// wraps so that lines fit `width` characters (0: no limit).
std::string schedule_list_text(const Registry& registry, std::size_t width = 100);

/// `name`'s description, placement, source, origin and parameters (type, default, help,
/// choices). `name` must be registered.
std::string schedule_description_text(const Registry& registry, const std::string& name);

}  // namespace bubblesim
