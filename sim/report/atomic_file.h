#pragma once
// Writing output files so that nothing is ever half-written or destroyed by mistake: the content
// goes to a temporary file beside the target, is flushed to disk, and is renamed over it. A reader
// sees the old file or the new one, never a torn one.
//
// The target is checked first: "-" is standard output; a symlink is followed (its target is
// written); a device, folder or FIFO is refused; so is any input file of this run
// (sim/units/text_file.h), compared by device and inode. An existing file keeps its mode. An
// advisory lock beside the target makes a second concurrent writer fail clearly, and the
// temporary file is removed on every exit path, SIGINT and SIGTERM included.

#include <memory>
#include <string>
#include <string_view>

namespace bubblesim {

/// The path a write to `path` replaces: symlinks followed. Throws InputError naming `path` when it
/// cannot be written (see above). Call it before running to refuse a bad output up front.
std::string check_output_path(const std::string& path);

/// Holds the advisory lock of an output for the lifetime of the object (e.g. a whole sweep);
/// writes by this process go through, another process's writer fails with an InputError.
class OutputLock {
 public:
  explicit OutputLock(const std::string& path);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string key_;
};

/// Throws InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace bubblesim
