#pragma once
// Writing output files so that nothing is ever half-written: the content goes to a temporary
// file in the same folder, is flushed to disk, and is renamed over the target. A reader sees the
// old file or the new one, never a torn one.

#include <string>
#include <string_view>

namespace bubblesim {

/// Throws InputError naming the path when the folder is missing or not writable.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace bubblesim
