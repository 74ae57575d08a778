// `gpuscope health`: one-shot health verdicts for the node's GPUs (XID, ECC,
// remapped rows, PCIe, NVLink, thermal, power, driver), as text for a person
// or JSON for scripts:
//
//   gpuscope health [--json] [--strict] [--watch DURATION [--count N]] [--verbose] [-i IDS]
//   gpuscope health --agent URL [--json] [--strict] [--verbose] [-i IDS] [TLS, auth]
//
// --agent reads a running `gpuscope serve`'s /api/v1/health and prints it
// through the same formatter, with the same exit code, as a local run.
//
// --watch judges again every DURATION until Ctrl-C (or N reports), each
// report judging rates (PCIe replays per minute, NVLink CRC errors per
// second) over the last interval. The exit code is the last report's, from
// the one table (exit_codes.h): 0 ok or warn, 1 warn with --strict, 15 a GPU
// is lost, 20 a GPU fails; why NVML did not open keeps its own code (6 no
// such GPU, 9 no driver). With NVML down the text form prints one sentence to
// stderr instead of a report.
//
// Thread safety: runs on main's thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "cli/commands.h"
#include "gpuscope/status.h"
#include "health/checks.h"

namespace gpuscope::cli {

struct HealthArgs {
  bool json = false;
  bool strict = false;
  bool verbose = false;
  bool help = false;
  double watch_seconds = 0;
  long count = 0;                 // --count: reports to print with --watch; 0: until Ctrl-C
  std::string ids;                // -i/--id, nvidia-smi syntax; empty: every GPU
  baseline::ClientOptions agent;  // --agent URL and its TLS/auth; url empty: sample here
};

// Parses the arguments after `health` (common options already removed).
Result<HealthArgs> ParseHealthArgs(const std::vector<std::string>& args);

std::string HealthUsage();

// The exit code for a report's verdict (exit_codes.h): lost, failed, warn
// with `strict`, ok; kNoDriver when NVML is down.
int HealthExit(const health::HealthReport& report, bool strict);

// Prints the report as `args` asks and returns HealthExit: the report on
// `out`, or one sentence on `err` when NVML is down (text form); a sentence
// on `err` for each lost GPU.
int PrintHealth(const HealthArgs& args, const health::HealthReport& report, std::ostream& out,
                std::ostream& err);

Status RunHealth(Invocation& inv);

}  // namespace gpuscope::cli
