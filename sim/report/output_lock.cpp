// OutputLock (atomic_file.h): an flock on ".NAME.lock" beside the output, shared by every writer
// of this process and refused to other processes while held.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "sim/report/atomic_file.h"
#include "sim/report/temp_file_cleanup.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

struct HeldLock {
  int fd = -1;
  int count = 0;
  std::string lock_path;
  std::unique_ptr<CleanupOnSignal> cleanup;
};

std::mutex& locks_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, HeldLock>& held_locks() {
  static std::map<std::string, HeldLock> locks;
  return locks;
}

std::string lock_path_for(const std::string& target) {
  std::filesystem::path t(target);
  std::filesystem::path dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
  return (dir / ("." + t.filename().string() + ".lock")).string();
}

// Opens and locks `lock_path`; retries when another process removed the file between our open
// and our lock (we would hold a lock on a file nobody else sees).
int acquire(const std::string& lock_path, const std::string& shown) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) throw InputError(fmt::format("cannot write '{}': {}", shown, std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) {
        throw InputError(
            fmt::format("cannot write '{}': another process is writing it (it holds the lock '{}')",
                        shown, lock_path));
      }
      throw InputError(fmt::format("cannot write '{}': {}", shown, std::strerror(err)));
    }
    struct stat by_fd {
    }, by_path{};
    if (::fstat(fd, &by_fd) == 0 && ::stat(lock_path.c_str(), &by_path) == 0 &&
        by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev) {
      return fd;
    }
    ::close(fd);
  }
  throw InputError(
      fmt::format("cannot write '{}': its lock '{}' keeps changing", shown, lock_path));
}

}  // namespace

OutputLock::OutputLock(const std::string& path) {
  key_ = check_output_path(path);
  if (key_ == "-") return;
  std::lock_guard guard(locks_mutex());
  HeldLock& held = held_locks()[key_];
  if (held.count == 0) {
    try {
      held.lock_path = lock_path_for(key_);
      held.fd = acquire(held.lock_path, path);
      held.cleanup = std::make_unique<CleanupOnSignal>(held.lock_path);
    } catch (...) {
      held_locks().erase(key_);
      throw;
    }
  }
  ++held.count;
}

OutputLock::~OutputLock() {
  if (key_ == "-") return;
  std::lock_guard guard(locks_mutex());
  auto it = held_locks().find(key_);
  if (it == held_locks().end() || --it->second.count > 0) return;
  it->second.cleanup.reset();  // unlinks the lock file while we still hold the lock
  ::close(it->second.fd);
  held_locks().erase(it);
}

}  // namespace bubblesim
