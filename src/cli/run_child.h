// The command `gpuscope run` starts: found on PATH like a shell finds it,
// started in its own process group with the terminal, environment, working
// directory and stdio of gpuscope, and waited for while SIGINT, SIGTERM,
// SIGHUP and SIGQUIT sent to gpuscope are passed on to its group.
//
// The child never outlives gpuscope unseen: it gets PR_SET_PDEATHSIG
// (SIGKILL) and gpuscope is a child subreaper, so the orphans the command
// leaves reparent to gpuscope (and are reaped by it) instead of to init.
// When gpuscope owns the terminal's foreground, the child's group gets it
// (Ctrl-C then reaches the command alone, not the report) and gpuscope takes
// it back when the child exits or stops.
//
// Usage: BlockRunSignals() on the main thread before any other thread starts
// (threads inherit the mask, so only the main thread receives them), then
// Child::Start, then Child::Wait.
// Thread safety: one Child, used from the main thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::cli {

// How a shell would run `name`: its path, or why it cannot. The exit status a
// shell gives the failure: 127 not found, 126 found but not executable.
struct Resolved {
  std::string path;
  int failure_status = 0;  // 0: path is set
  std::string error;       // "python4: command not found"
};
Resolved ResolveCommand(const std::string& name, const char* path_env);

// Blocks the signals Wait receives (SIGCHLD and the forwarded ones) in the
// calling thread, and makes this process a child subreaper.
void BlockRunSignals();

// The command's outcome as a shell reports it: its exit code, or 128 + the
// signal that killed it.
struct Outcome {
  int status = 0;
  int signal = 0;  // the signal that killed it; 0 when it exited
};

class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  // Starts `path` with `argv` (argv[0] as typed) and gpuscope's environment.
  Status Start(const std::string& path, const std::vector<std::string>& argv);
  // Waits for the child, passing on forwarded signals and reaping orphans;
  // calls `tick` every `period` while it runs (the live line).
  Outcome Wait(std::chrono::milliseconds period, const std::function<void()>& tick);
  pid_t pid() const { return pid_; }

 private:
  void TakeTerminal();
  void GiveTerminal();

  pid_t pid_ = -1;
  bool owns_terminal_ = false;  // gave the terminal's foreground to the child
};

}  // namespace gpuscope::cli
