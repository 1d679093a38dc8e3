#pragma once
// ProgressReporter: a one-line "[3/12] run: 1f1b" progress display on a terminal, for commands
// that work through many schedules, scenarios or optimizer steps. It writes only when its stream
// is a terminal (isatty), so piped or redirected output and test logs stay clean, and it erases
// its line when done so the report that follows starts on a clean line.

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace bubblesim {

class ProgressReporter {
 public:
  /// Shows progress on `stream` only if it is a terminal.
  ProgressReporter(std::string what, std::size_t total, std::FILE* stream = stderr)
      : ProgressReporter(std::move(what), total, stream, ::isatty(::fileno(stream)) != 0) {}
  /// `enabled` overrides the terminal check (tests).
  ProgressReporter(std::string what, std::size_t total, std::FILE* stream, bool enabled)
      : what_(std::move(what)), total_(total), stream_(stream), enabled_(enabled) {}
  ~ProgressReporter() { finish(); }
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  bool enabled() const { return enabled_; }

  /// Announces the next item ("[done+1/total] what: item").
  void step(std::string_view item) {
    ++done_;
    item_ = std::string(item);
    show(fmt::format("[{}/{}] {}: {}", done_, total_, what_, item_));
  }

  /// A status of the current item, e.g. an optimizer's best cost so far ("[2/4] run: optimized -
  /// status") or the phase a run is in ("simulating on the cluster"). A status whose first word
  /// differs from the last one drawn (a new phase) is drawn at once; updates of one kind at most
  /// ten times a second.
  void detail(std::string_view status) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    const std::string_view kind = status.substr(0, status.find(' '));
    if (kind == last_kind_ && now - last_detail_ < std::chrono::milliseconds(100)) return;
    last_detail_ = now;
    last_kind_ = std::string(kind);
    if (done_ == 0)  // before the first item: what the command is doing first
      show(fmt::format("{}: {}", what_, status));
    else
      show(fmt::format("[{}/{}] {}: {} - {}", done_, total_, what_, item_, status));
  }

  /// Erases the progress line (idempotent).
  void finish() {
    if (!enabled_ || shown_ == 0) return;
    fmt::print(stream_, "\r{:<{}}\r", "", shown_);
    std::fflush(stream_);
    shown_ = 0;
  }

 private:
  void show(std::string line) {
    if (!enabled_) return;
    if (line.size() > 100) line = line.substr(0, 97) + "...";
    // Pad to the previous line's width so a shorter line fully covers it.
    std::size_t width = std::max(line.size(), shown_);
    fmt::print(stream_, "\r{:<{}}", line, width);
    std::fflush(stream_);
    shown_ = line.size();
  }

  std::string what_;
  std::string item_;
  std::chrono::steady_clock::time_point last_detail_{};
  std::string last_kind_;  // the first word of the last status drawn
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t shown_ = 0;
  std::FILE* stream_;
  bool enabled_;
};

}  // namespace bubblesim
