#include "cli/stop.h"

#include <signal.h>

#include <atomic>
#include <thread>

namespace gpuscope::cli {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "signal handlers need a lock-free flag");

void OnSignal(int) { g_stop.store(true); }

// Short enough that Ctrl-C feels immediate, long enough to cost nothing.
constexpr auto kSlice = std::chrono::milliseconds(20);

}  // namespace

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool StopRequested() { return g_stop.load(); }

void SetStopRequested(bool stop) { g_stop.store(stop); }

bool SleepUntil(std::chrono::steady_clock::time_point deadline) {
  while (!StopRequested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(kSlice, deadline - now));
  }
  return false;
}

}  // namespace gpuscope::cli
