#include "sim/report/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "sim/report/temp_file_cleanup.h"
#include "sim/units/diagnostics.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw InputError(fmt::format("cannot write '{}': {}", path, why));
}

// `path` with every symlink of its last component followed (a dangling link gives the path it
// points to, which the write then creates).
std::string follow_symlinks(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::error_code ec;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) refuse(path, ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  refuse(path, "too many levels of symbolic links");
}

std::string describe_type(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
  if (S_ISFIFO(mode)) return "it is a FIFO (pipe), not a regular file";
  return "it is not a regular file";
}

void refuse_inputs(const std::string& path, const struct stat& st) {
  for (const InputFileIdentity& input : input_files_read()) {
    if (input.device == st.st_dev && input.inode == st.st_ino) {
      refuse(path, input.path == path
                       ? "it is an input of this run (it would be overwritten)"
                       : fmt::format("it is '{}', an input of this run (it would be overwritten)",
                                     input.path));
    }
  }
}

void write_all(int fd, std::string_view content, const std::string& path) {
  std::size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(path, std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
}

void write_stdout(std::string_view content) {
  std::fwrite(content.data(), 1, content.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

std::string check_output_path(const std::string& path) {
  if (path == "-") return path;
  if (path.empty()) refuse(path, "the file name is empty");
  const std::string target = follow_symlinks(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) refuse(path, describe_type(st.st_mode));
    refuse_inputs(path, st);
    return target;
  }
  if (errno != ENOENT) refuse(path, std::strerror(errno));
  fs::path dir = fs::path(target).parent_path();
  if (dir.empty()) dir = ".";
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) {
    refuse(path, fmt::format("the folder '{}' does not exist", dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    refuse(path, fmt::format("the folder '{}' is not writable", dir.string()));
  }
  return target;
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string target = check_output_path(path);
  if (target == "-") return write_stdout(content);
  OutputLock lock(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;

  static std::atomic<int> counter{0};
  fs::path t(target);
  fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  std::string tmp =
      (dir / fmt::format(".{}.tmp.{}.{}", t.filename().string(), ::getpid(), counter++)).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) refuse(path, std::strerror(errno));
  CleanupOnSignal cleanup(tmp);  // removes the temporary file on every way out but success
  try {
    if (exists) {
      (void)::fchown(fd, existing.st_uid, existing.st_gid);  // as root; harmless otherwise
      if (::fchmod(fd, existing.st_mode & 07777) != 0) refuse(path, std::strerror(errno));
    }
    write_all(fd, content, path);
    if (::fsync(fd) != 0) refuse(path, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) refuse(path, std::strerror(errno));
  if (::rename(tmp.c_str(), target.c_str()) != 0) refuse(path, std::strerror(errno));
  cleanup.release();
}

}  // namespace bubblesim
