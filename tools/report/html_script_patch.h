#pragma once
// Views patched into the HTML report's script for the pages that need them (html_moe_phases.h,
// html_iteration_tail.h), so that every other page keeps the script byte for byte.

#include <string>

namespace bubblesim {

/// Replaces the one occurrence of `anchor` in `script` by `with`; throws std::logic_error naming
/// `view` when the anchor is missing or not unique (the base script changed around it).
void patch_script(std::string& script, const std::string& view, const std::string& anchor,
                  const std::string& with);

/// JavaScript that appends to the legend a line `intro`, one swatch per entry of the script's
/// table `table` ({key: [label, colour, ...]}), then `outro` (may be empty).
std::string legend_line_js(const std::string& table, const std::string& css_class,
                           const std::string& intro, const std::string& outro);

}  // namespace bubblesim
