#include "sim/units/text_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<InputFileIdentity>& registry() {
  static std::vector<InputFileIdentity> files;
  return files;
}

void remember(const struct stat& st, const std::string& path) {
  std::lock_guard lock(registry_mutex());
  for (const InputFileIdentity& f : registry()) {
    if (f.device == st.st_dev && f.inode == st.st_ino) return;
  }
  registry().push_back({st.st_dev, st.st_ino, path});
}

// Closes the descriptor on every path out of read_input_file.
struct Fd {
  int fd = -1;
  bool owned = true;
  ~Fd() {
    if (fd >= 0 && owned) ::close(fd);
  }
};

// Why a file of this type cannot be read as an input; nullopt for a regular file and, where
// allowed, a pipe.
std::optional<std::string> refused_type(mode_t mode, InputSource source) {
  if (S_ISREG(mode)) return std::nullopt;
  if (S_ISFIFO(mode) && source == InputSource::file_or_stream) return std::nullopt;
  if (S_ISDIR(mode)) return std::string("is a folder, not a file");
  if (S_ISFIFO(mode)) return std::string("is a FIFO (pipe), not a regular file");
  if (S_ISCHR(mode) || S_ISBLK(mode)) return std::string("is a device, not a regular file");
  if (S_ISSOCK(mode)) return std::string("is a socket, not a regular file");
  return std::string("is not a regular file");
}

// Reads at most kMaxInputFileBytes + 1 bytes, so an oversized input is detected without reading
// it all (never trusting st_size, which is 0 or meaningless for pipes and devices).
std::optional<std::string> read_bounded(int fd, std::string& text, std::size_t max_bytes) {
  text.clear();
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EISDIR) return std::string("is a folder, not a file");
      return fmt::format("cannot read the file: {}", std::strerror(errno));
    }
    if (n == 0) return std::nullopt;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      return fmt::format("the file is too large (over {} bytes; input files are limited to {} MiB)",
                         max_bytes, max_bytes >> 20);
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::optional<std::string> read_input_file(const std::string& path, std::string& text,
                                           InputSource source, std::size_t max_bytes) {
  if (path.empty()) return std::string("the file name is empty");
  Fd fd;
  if (path == "-" && source == InputSource::file_or_stream) {
    fd.fd = STDIN_FILENO;
    fd.owned = false;
  } else {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise block before it can be refused.
    fd.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd.fd < 0) return std::string("cannot open the file for reading");
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return std::string("cannot open the file for reading");
  if (auto refused = refused_type(st.st_mode, source)) return refused;
  if (fd.owned) {
    int flags = ::fcntl(fd.fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd.fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  if (auto problem = read_bounded(fd.fd, text, max_bytes)) return problem;
  if (S_ISREG(st.st_mode)) remember(st, path);
  return std::nullopt;
}

std::string read_text_file(const std::string& path, InputSource source, std::size_t max_bytes) {
  std::string text;
  if (auto problem = read_input_file(path, text, source, max_bytes)) {
    throw InputError(fmt::format("{}: {}", path, *problem));
  }
  return text;
}

std::vector<InputFileIdentity> input_files_read() {
  std::lock_guard lock(registry_mutex());
  return registry();
}

}  // namespace bubblesim
