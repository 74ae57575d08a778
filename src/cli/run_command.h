// `gpuscope run [OPTIONS] -- CMD ARGS...`: `time` for GPUs. Runs CMD as a
// child (cli/run_child.h), samples the GPUs in this process while it runs
// (cli/run_watch.h), and at its exit reports what CMD's process tree used:
// the `gpuscope report` of the run (jobs/report.h, "job": "run <pid>") with
// the run's own notes (jobs/run_notes.h). docs/reports.md shows one.
//
//   --report FILE      write the report there instead of stderr
//   --json             the report job JSON contract
//   --markdown         Markdown, for a CI log or a pull request comment
//   --live             one refreshed status line on stderr (a terminal only)
//   --interval D       sampling interval, as serve's -c: "500ms", "2s", bare ms
//                      (default 1000, at least 100 ms)
//   --thresholds FILE  the notes' thresholds (deploy/reports/thresholds.yaml)
//
// Exit status: CMD's, or 128 + the signal that killed it; 127 when CMD is not
// found and 126 when it cannot be executed (as a shell); gpuscope's own for
// bad options (2) or no NVML / no GPU (cli::ExitCodeFor), CMD not started.
//
// Thread safety: runs on main's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct RunArgs {
  std::vector<std::string> command;  // CMD ARGS...
  std::string report_file;           // empty: stderr
  bool json = false, markdown = false, live = false, help = false;
  double interval_seconds = 1;
  std::string thresholds_file;
};

// Parses the arguments after `run` (common options already removed):
// options up to `--` or the first word that is not one, then CMD ARGS.
Result<RunArgs> ParseRunArgs(const std::vector<std::string>& args);
std::string RunUsage();
Status RunRun(Invocation& inv);

}  // namespace gpuscope::cli
