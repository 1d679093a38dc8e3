#pragma once
// The CSV file a sweep writes, streamed: rows are appended to OUTPUT.partial as they complete
// (flushed to disk at most once a second), and the finished file is renamed over OUTPUT, so the
// sweep writes its file about once over and OUTPUT is never half-written. A killed sweep leaves
// OUTPUT.partial, which --resume continues and any other run of the same output replaces.
//
// OUTPUT may be a symlink (its target is written, the partial file beside the target); an
// existing target keeps its permission bits and must be a regular file. An exclusive advisory
// lock on the partial file stops a second sweep writing the same output.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace bubblesim {

class SweepFile {
 public:
  /// Opens and locks the partial file, keeping its contents (InputError naming the path when it
  /// cannot be written or another sweep holds it).
  explicit SweepFile(const std::string& output);
  ~SweepFile();
  SweepFile(const SweepFile&) = delete;
  SweepFile& operator=(const SweepFile&) = delete;

  const std::string& target() const { return target_; }
  const std::string& partial() const { return partial_; }
  /// The partial file's contents (what an interrupted run left).
  std::string read_partial() const;
  /// The target's contents; empty when it does not exist.
  std::string read_target() const;
  /// Cuts the partial file to its first `bytes` and appends after them.
  void truncate(std::size_t bytes);
  void append(std::string_view text);
  /// Flushes, renames the partial file over the target and flushes the folder.
  void finish();
  /// Bytes appended by this run.
  std::uint64_t bytes_written() const { return written_; }

 private:
  void sync();

  std::string target_, partial_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
  std::chrono::steady_clock::time_point synced_;
};

}  // namespace bubblesim
