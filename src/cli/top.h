// `gpuscope top`: a live terminal view of every GPU and its processes,
// redrawn every interval with ANSI escape codes (no curses):
//
//   gpuscope top [--interval 1s] [-i IDS] [--once] [--no-color]
//
// The sampler runs its own background loop and each frame is drawn from its
// latest snapshot, so a slow or hung NVML call never freezes the view (the
// GPU shows STALE instead). The live view uses the alternate screen and fits
// the terminal (80x24 holds 8 GPUs: a row each, the selected one's details
// below); q, Q or Esc quit, j/k and the arrows select (cli/top_terminal.h).
// --once prints the full frame (a block per GPU) without clearing and exits.
// q, SIGINT and SIGTERM restore the terminal and exit 0. With --agent URL the
// frames are the agent's snapshots (cli/agent_source.h), fetched every interval.
//
// Thread safety: runs on main's thread.
#pragma once

#include <string>
#include <vector>

#include "cli/agent_source.h"
#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct TopArgs {
  double interval_seconds = 1;
  std::string ids;  // -i/--id, nvidia-smi syntax; empty: every GPU
  bool once = false;
  bool color = true;
  bool help = false;
  AgentOption agent;  // --agent URL: the agent's snapshots, polled every interval
};

// Parses the arguments after `top` (common options already removed).
Result<TopArgs> ParseTopArgs(const std::vector<std::string>& args);

// "300ms", "2s", "1", "1m" -> seconds. Errors name the text.
Result<double> ParseInterval(const std::string& text);

std::string TopUsage();

Status RunTop(Invocation& inv);

}  // namespace gpuscope::cli
