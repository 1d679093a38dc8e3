#pragma once
// Runs the real `bubblesim` binary from the source folder (so paths in messages are relative,
// e.g. "tests/errors/x.yaml") and captures stdout, stderr and the exit code.

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bubblesim::cli_testing {

struct Result {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// A unique temporary file name per call (test binaries may run in parallel).
inline std::string fmt_name() {
  static int counter = 0;
  return "bubblesim_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

/// A fresh folder under the system's temporary folder, removed with everything in it (its
/// permissions restored first, for tests that make it read-only).
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() / fmt_name();
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::string source(const std::string& rel) {
  return std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `bubblesim ARGS` from the source folder; `env` is prepended (e.g.
/// "BUBBLESIM_PLUGIN_PATH=x").
inline Result run(const std::string& args, const std::string& env = "") {
  std::filesystem::path err_file = std::filesystem::temp_directory_path() / fmt_name();
  std::string cmd = "cd '" + std::string(BUBBLESIM_SOURCE_DIR) + "' && " + env + " '" +
                    BUBBLESIM_BINARY + "' " + args + " 2>'" + err_file.string() + "'";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file.string());
  std::filesystem::remove(err_file);
  return r;
}

}  // namespace bubblesim::cli_testing
