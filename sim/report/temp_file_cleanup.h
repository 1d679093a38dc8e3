#pragma once
// Removing temporary and lock files on every exit path: an object of CleanupOnSignal registers a
// path that a handler of the terminating signals a terminal, shell or pipe sends (SIGINT,
// SIGQUIT, SIGHUP, SIGTERM, SIGPIPE) unlinks before re-raising the signal (so the process still
// ends as killed); the destructor unlinks it too unless release() was called (the file was
// renamed into place). Used by the output writer (atomic_file.h).

#include <string>

namespace bubblesim {

class CleanupOnSignal {
 public:
  explicit CleanupOnSignal(const std::string& path);
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
  /// Keeps the file: neither the destructor nor a signal removes it any more.
  void release();

 private:
  int slot_ = -1;
  std::string path_;
  bool released_ = false;
};

}  // namespace bubblesim
