#pragma once
// ProgressReporter: a one-line "[3/12] run: 1f1b - simulating on the cluster (12 s)" progress
// display on a terminal, rewritten in place on stderr as cargo, pip and apt do, for commands that
// work through many schedules, scenarios, sweep points or Monte Carlo samples. It writes only
// when its stream is a terminal (isatty), so piped or redirected output, JSON runs and CI logs
// stay clean; it draws nothing for work that ends within its delay (a second), then keeps the
// elapsed time ticking while a long phase (setup, routes, the replay) says nothing new; and it
// erases its line when done so the report that follows starts on a clean line. detail() may be
// called from several threads (Monte Carlo workers).

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace bubblesim {

class ProgressReporter {
 public:
  using Clock = std::chrono::steady_clock;
  /// Shows progress on `stream` only if it is a terminal, after a second.
  ProgressReporter(std::string what, std::size_t total, std::FILE* stream = stderr)
      : ProgressReporter(std::move(what), total, stream, ::isatty(::fileno(stream)) != 0) {}
  /// `enabled` overrides the terminal check; `delay`: how long work runs before a line is drawn
  /// (tests pass zero).
  ProgressReporter(std::string what, std::size_t total, std::FILE* stream, bool enabled,
                   Clock::duration delay = std::chrono::seconds(1))
      : what_(std::move(what)),
        total_(total),
        stream_(stream),
        enabled_(enabled),
        delay_(delay),
        started_(Clock::now()) {
    if (enabled_) ticker_.thread = std::thread([this] { tick(); });
  }
  ~ProgressReporter() { finish(); }
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  bool enabled() const { return enabled_; }

  /// Announces the next item ("[done+1/total] what: item").
  void step(std::string_view item) {
    std::lock_guard lock(ticker_.mutex);
    ++done_;
    item_ = std::string(item);
    set(fmt::format("[{}/{}] {}: {}", done_, total_, what_, item_));
  }

  /// A status of the current item, e.g. an optimizer's best cost so far ("[2/4] run: optimized -
  /// status") or the phase a run is in ("simulating on the cluster"). A status whose first word
  /// differs from the last one drawn (a new phase) is drawn at once; updates of one kind at most
  /// ten times a second.
  void detail(std::string_view status) {
    if (!enabled_) return;
    std::lock_guard lock(ticker_.mutex);
    const auto now = Clock::now();
    const std::string_view kind = status.substr(0, status.find(' '));
    if (kind == rate_.kind && now - rate_.last < std::chrono::milliseconds(100)) return;
    rate_.last = now;
    rate_.kind = std::string(kind);
    if (done_ == 0)  // before the first item: what the command is doing first
      set(fmt::format("{}: {}", what_, status));
    else
      set(fmt::format("[{}/{}] {}: {} - {}", done_, total_, what_, item_, status));
  }

  /// Erases the progress line and stops the clock (idempotent).
  void finish() {
    {
      std::lock_guard lock(ticker_.mutex);
      if (ticker_.stopped) return;
      ticker_.stopped = true;
      if (enabled_ && line_.shown > 0) {
        fmt::print(stream_, "\r{:<{}}\r", "", line_.shown);
        std::fflush(stream_);
        line_.shown = 0;
      }
    }
    ticker_.wake.notify_all();
    if (ticker_.thread.joinable()) ticker_.thread.join();
  }

 private:
  /// The line: its text, the width drawn (0: nothing on screen) and the seconds it showed.
  struct Line {
    std::string text;
    std::size_t shown = 0;
    long long seconds = -1;
  };
  /// detail()'s rate limit: the last status drawn, by its first word.
  struct Rate {
    Clock::time_point last{};
    std::string kind;
  };
  /// The clock thread and the lock every drawing holds.
  struct Ticker {
    std::mutex mutex;
    std::condition_variable wake;
    std::thread thread;
    bool stopped = false;
  };

  // Caller holds the lock: the line to show from now on, drawn at once past the delay.
  void set(std::string line) {
    line_.text = std::move(line);
    if (enabled_ && Clock::now() - started_ >= delay_) draw();
  }
  // Caller holds the lock: the line, with the time the work has taken once it reaches a second.
  void draw() {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count();
    std::string line = seconds >= 1 ? fmt::format("{} ({} s)", line_.text, seconds) : line_.text;
    if (line.size() > 100) line = line.substr(0, 97) + "...";
    // Pad to the previous line's width so a shorter line fully covers it.
    const std::size_t width = std::max(line.size(), line_.shown);
    fmt::print(stream_, "\r{:<{}}", line, width);
    std::fflush(stream_);
    line_.shown = line.size();
    line_.seconds = seconds;
  }
  // The clock: redraws the line when its elapsed time has moved on a second, so that a long
  // phase that reports nothing new (setup, routes, a replay) still shows it is alive.
  void tick() {
    std::unique_lock lock(ticker_.mutex);
    while (!ticker_.stopped) {
      ticker_.wake.wait_for(lock, std::chrono::milliseconds(250));
      if (ticker_.stopped || line_.text.empty() || Clock::now() - started_ < delay_) continue;
      const auto seconds =
          std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count();
      if (line_.shown == 0 || seconds != line_.seconds) draw();
    }
  }

  std::string what_;
  std::string item_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::FILE* stream_;
  bool enabled_;
  Clock::duration delay_;
  Clock::time_point started_;
  Line line_;
  Rate rate_;
  Ticker ticker_;
};

}  // namespace bubblesim
