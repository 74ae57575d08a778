// The exit codes of every gpuscope command, in one table: main() turns a
// command's Status into one of them (ExitFor), `gpuscope --help` prints them
// (ExitCodeHelp) and docs/cli.md lists them. Where nvidia-smi documents a
// return code for the same case (they are NVML's nvmlReturn_t values), the
// code is nvidia-smi's: 2 invalid argument, 3 not supported, 4 no
// permission, 6 not found, 9 driver not loaded, 15 GPU lost, 255 other.
// gpuscope's own outcomes take codes nvidia-smi leaves free: 1 a health
// warning with --strict, 20 a health check failed, 21 a source (an agent,
// Prometheus, the kubelet) did not answer.
//
// Commands return the Status that fits (InvalidArgument = usage, NotFound,
// Unavailable...); NVML errors carry their nvmlReturn_t (Status::detail) and
// keep nvidia-smi's code for it. A command whose outcome is not an error
// (health's verdict) sets Invocation::exit_code from this table.
//
// Thread safety: immutable table, pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::cli {

enum class Exit : int {
  kOk = 0,
  kHealthWarn = 1,     // health --strict: a GPU warns
  kUsage = 2,          // unknown option, bad value, missing argument (nvidia-smi 2)
  kNotSupported = 3,   // the device or driver lacks the feature (nvidia-smi 3)
  kNoPermission = 4,   // the user may not do this (nvidia-smi 4)
  kNotFound = 6,       // no such GPU, scenario, file, job (nvidia-smi 6)
  kNoDriver = 9,       // NVIDIA driver not loaded or its library missing (nvidia-smi 9)
  kGpuLost = 15,       // a GPU fell off the bus (XID 79, GPU_IS_LOST; nvidia-smi 15)
  kHealthFailed = 20,  // health: a GPU fails a check
  kUnreachable = 21,   // an agent, Prometheus or the kubelet did not answer, or refused
  kInternal = 255,     // anything else (nvidia-smi 255)
};

struct ExitCodeRow {
  Exit code;
  std::string_view name;     // "usage"
  std::string_view meaning;  // one line for --help and docs/cli.md
};

// Every code, in numeric order.
std::span<const ExitCodeRow> ExitCodeTable();

// The code for a command's Status (kOk for an OK one).
Exit ExitFor(const Status& status);

// "Exit status:" and one line per code, for `gpuscope --help`.
std::string ExitCodeHelp();

// The table as Markdown rows (docs/cli.md; a test keeps them equal).
std::string ExitCodeMarkdown();

// An Unavailable status for NVML itself (it stopped answering after it
// opened), so that it exits kNoDriver rather than kUnreachable.
Status NvmlUnavailable(std::string message);

// A GPU that answers GPU_IS_LOST: exits kGpuLost with `message` on stderr.
Status GpuLost(std::string message);

}  // namespace gpuscope::cli
