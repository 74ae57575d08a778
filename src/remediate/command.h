// Runs a program without a shell and waits for it at most `timeout_s`:
// posix_spawnp (argv[0] looked up in PATH), stdout and stderr captured
// together (at most 1 MiB kept), killed with SIGKILL past the deadline,
// with every process it started (it runs in a process group of its own).
// Used for scontrol and sinfo, so a hung slurmctld costs the remediation
// thread a bounded wait and never the sampler or a scrape.
//
// Thread safety: reentrant (posix_spawn is safe in a threaded process).
#pragma once

#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::remediate {

struct CommandOutput {
  int exit_code = 0;   // the program's exit status
  std::string output;  // stdout and stderr, interleaved
};

// Fails when the program cannot start (missing: "not found in PATH"), is
// killed by a signal or runs past the deadline; a non-zero exit is a value.
// `env`: "NAME=value" entries that replace or add to the agent's environment.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, double timeout_s,
                                 const std::vector<std::string>& env = {});

}  // namespace gpuscope::remediate
