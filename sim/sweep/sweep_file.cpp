#include "sim/sweep/sweep_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/report/atomic_file.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw InputError(fmt::format("-o: cannot {} '{}': {}", what, path, std::strerror(errno)));
}

// The file OUTPUT names: a symlink's target (resolved as far as it exists); refuses paths that
// are not regular files.
std::string resolve_target(const std::string& output) {
  if (output.empty()) throw InputError("-o: the output path is empty");
  // Inputs read since the command checked its outputs (the first point's topology, profile or
  // table file) are refused here too.
  (void)check_output_path(output);
  std::error_code ec;
  std::string target = output;
  if (fs::is_symlink(output, ec)) target = fs::weakly_canonical(output, ec).string();
  if (ec) target = output;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw InputError(
        fmt::format("-o: '{}' is not a regular file (a sweep writes its CSV to a file)", output));
  }
  return target;
}

void sync_folder(const std::string& file) {
  fs::path folder = fs::path(file).parent_path();
  int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  (void)::fsync(dir);
  ::close(dir);
}

}  // namespace

SweepFile::SweepFile(const std::string& output)
    : target_(resolve_target(output)), partial_(target_ + ".partial") {
  fd_ = ::open(partial_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) fail("write", partial_);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw InputError(fmt::format(
        "-o: another sweep is writing '{}' (it holds '{}'); wait for it or choose another file",
        output, partial_));
  }
  synced_ = std::chrono::steady_clock::now();
}

SweepFile::~SweepFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool SweepFile::read_partial(const std::function<bool(std::string_view)>& each) const {
  char buffer[1 << 16];
  bool any = false;
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd_, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", partial_);
    if (n == 0) return any;
    any = true;
    if (!each(std::string_view(buffer, static_cast<std::size_t>(n)))) return any;
    at += n;
  }
}

void SweepFile::read_target(const std::function<bool(std::string_view)>& each) const {
  // Not read_text_file: the output is not an input of the run, and may be larger than inputs.
  std::ifstream in(target_, std::ios::binary);
  if (!in) return;
  std::vector<char> buffer(std::size_t{1} << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0 || !each(std::string_view(buffer.data(), n))) return;
  }
}

void SweepFile::append_from_target(std::size_t bytes) {
  read_target([&](std::string_view piece) {
    const std::size_t take = std::min(piece.size(), bytes);
    append(piece.substr(0, take));
    bytes -= take;
    return bytes > 0;
  });
}

void SweepFile::truncate(std::size_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("truncate", partial_);
  if (::lseek(fd_, static_cast<off_t>(bytes), SEEK_SET) < 0) fail("seek in", partial_);
}

void SweepFile::append(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", partial_);
    written_ += static_cast<std::uint64_t>(n);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  if (std::chrono::steady_clock::now() - synced_ >= std::chrono::seconds(1)) sync();
}

void SweepFile::sync() {
  if (::fdatasync(fd_) != 0) fail("flush", partial_);
  synced_ = std::chrono::steady_clock::now();
}

void SweepFile::finish() {
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && ::fchmod(fd_, st.st_mode & 07777) != 0)
    fail("set the mode of", partial_);
  sync();
  // A later point may have read the target as an input (an axis over topology files): it is
  // kept, and the rows stay in the partial file.
  (void)check_output_path(target_);
  if (::rename(partial_.c_str(), target_.c_str()) != 0) fail("rename to", target_);
  sync_folder(target_);
}

}  // namespace bubblesim
