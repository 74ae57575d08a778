// Stopping long-running commands cleanly: SIGINT and SIGTERM set a flag that
// loops poll, and SleepUntil wakes early when it is set.
// Thread safety: the flag is a lock-free atomic; any thread may poll it.
#pragma once

#include <chrono>

namespace gpuscope::cli {

// Installs the SIGINT/SIGTERM handlers (idempotent).
void InstallStopHandlers();
bool StopRequested();
// For tests: sets or clears the flag as a signal would.
void SetStopRequested(bool stop);

// Sleeps until `deadline`; false when a stop was requested first.
bool SleepUntil(std::chrono::steady_clock::time_point deadline);

}  // namespace gpuscope::cli
