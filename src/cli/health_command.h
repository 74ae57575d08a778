// `gpuscope health`: one-shot health verdicts for the node's GPUs (XID, ECC,
// remapped rows, PCIe, NVLink, thermal, power, driver), as text for a person
// or JSON for scripts:
//
//   gpuscope health [--json] [--strict] [--watch SECONDS] [--verbose] [-i IDS]
//   gpuscope health --agent URL [--json] [--strict] [--verbose] [-i IDS] [TLS, auth]
//
// --agent reads a running `gpuscope serve`'s /api/v1/health and prints it
// through the same formatter, with the same exit code, as a local run.
//
// --watch samples a second time after that long, so rates (PCIe replays per
// minute, NVLink CRC errors per second) can be judged. The exit code is the
// report's (health/report.h): 0 ok or warn, 1 warn with --strict, 2 when a GPU
// fails or NVML is down, so node-drain hooks and probes can use it. With NVML
// down the text form prints one sentence to stderr instead of a report.
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
  std::string ids;                // -i/--id, nvidia-smi syntax; empty: every GPU
  baseline::ClientOptions agent;  // --agent URL and its TLS/auth; url empty: sample here
};

// Parses the arguments after `health` (common options already removed).
Result<HealthArgs> ParseHealthArgs(const std::vector<std::string>& args);

std::string HealthUsage();

// Prints the report as `args` asks and returns the exit code: the report on
// `out`, or one sentence on `err` when NVML is down (text form).
int PrintHealth(const HealthArgs& args, const health::HealthReport& report, std::ostream& out,
                std::ostream& err);

Status RunHealth(Invocation& inv);

}  // namespace gpuscope::cli
