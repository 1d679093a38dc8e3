#include "sim/report/temp_file_cleanup.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace bubblesim {
namespace {

// Fixed storage the signal handler can read without allocating. A slot is published by storing
// its state after the path is written.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> armed{false};
  char path[kPathMax] = {};
};
std::array<Slot, kSlots> g_slots;

extern "C" void unlink_registered_and_reraise(int sig) {
  for (Slot& s : g_slots) {
    if (s.armed.load()) ::unlink(s.path);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Every signal whose default action ends the process and that a terminal, a shell or a pipe
// sends: Ctrl-C (SIGINT), Ctrl-\ (SIGQUIT), the terminal closing (SIGHUP), kill (SIGTERM), the
// reader of a pipe going away (SIGPIPE).
constexpr std::array kTerminatingSignals{SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE};

// Installs the handler for each of them, unless the signal is ignored (nohup ignores SIGHUP, a
// shell's background job SIGINT) or already handled by someone else.
void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kTerminatingSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction act {};
      act.sa_handler = unlink_registered_and_reraise;
      sigemptyset(&act.sa_mask);
      ::sigaction(sig, &act, nullptr);
    }
  });
}

}  // namespace

CleanupOnSignal::CleanupOnSignal(const std::string& path) : path_(path) {
  install_handlers();
  if (path.size() >= kPathMax) return;  // still removed by the destructor
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].armed.store(true);
    slot_ = i;
    return;
  }
}

void CleanupOnSignal::release() {
  released_ = true;
  if (slot_ < 0) return;
  g_slots[slot_].armed.store(false);
  g_slots[slot_].used.store(false);
  slot_ = -1;
}

CleanupOnSignal::~CleanupOnSignal() {
  if (slot_ >= 0) g_slots[slot_].armed.store(false);
  if (!released_) ::unlink(path_.c_str());
  release();
}

}  // namespace bubblesim
