// `gpuscope` with no command: a concise table of every GPU, like the summary
// nvidia-smi prints without arguments (versions, then per GPU: index, name,
// bus id, temperature, performance state, power draw/limit, memory
// used/total, utilization; MIG instances under their GPU; then processes).
// Thread safety: FormatSummary is pure; RunSummary runs on main's thread.
#pragma once

#include <string>

#include "cli/commands.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct SummaryOptions {
  bool simulated = false;
  std::string scenario;  // shown as "simulated node (scenario <name>)"
};

std::string FormatSummary(const Snapshot& snapshot, const SummaryOptions& options);

Status RunSummary(Invocation& inv);

}  // namespace gpuscope::cli
