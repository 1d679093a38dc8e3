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
#include <functional>
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
  /// Hands the partial file's contents (what an interrupted run left) to `each` piece by piece,
  /// until it returns false; returns whether the file had any.
  bool read_partial(const std::function<bool(std::string_view)>& each) const;
  /// The same for the target (nothing when it does not exist).
  void read_target(const std::function<bool(std::string_view)>& each) const;
  /// Appends the target's first `bytes` to the partial file.
  void append_from_target(std::size_t bytes);
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
