#pragma once
// Reading a whole input file (a scenario, topology, sweep spec, table CSV, measured profile,
// PyTorch schedule) into memory. The path is opened once and must be a regular file (or, where a
// stream is allowed, "-" for standard input, /dev/stdin or a pipe); it is read up to
// kMaxInputFileBytes, so /dev/zero, a folder or a FIFO is a clear error instead of a hang or an
// out-of-memory. Every file read is remembered (device and inode) so that an output onto an input
// of the run can be refused (sim/report/atomic_file.h).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bubblesim {

inline constexpr std::size_t kMaxInputFileBytes = std::size_t{16} << 20;
/// Schedule tables (table, PyTorch and Chakra files) and sweep CSVs grow with the ops they hold
/// (--max-ops allows 50 million, some GB of CSV); they get a larger bound.
inline constexpr std::size_t kMaxTableFileBytes = std::size_t{1} << 30;

enum class InputSource {
  file,            // a regular file only
  file_or_stream,  // also "-" (standard input), /dev/stdin, a pipe: for the scenario
};

/// Reads `path` into `text`, at most `max_bytes`. Returns the problem without the path ("cannot
/// open the file for reading", "is a folder, not a file", "the file is too large (...)"), or
/// nullopt on success.
std::optional<std::string> read_input_file(const std::string& path, std::string& text,
                                           InputSource source = InputSource::file,
                                           std::size_t max_bytes = kMaxInputFileBytes);

/// Reads the file at `path` into a string; InputError "PATH: problem" when it cannot be read.
std::string read_text_file(const std::string& path, InputSource source = InputSource::file,
                           std::size_t max_bytes = kMaxInputFileBytes);

/// A file read by read_input_file in this process (a regular file; streams are not kept).
struct InputFileIdentity {
  unsigned long long device = 0;
  unsigned long long inode = 0;
  std::string path;
};

/// Every regular file read so far (thread-safe).
std::vector<InputFileIdentity> input_files_read();

}  // namespace bubblesim
