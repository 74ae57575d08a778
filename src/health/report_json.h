// Reads back what health::FormatJson wrote: the health report an agent answers
// on /api/v1/health, so `gpuscope health --agent URL` prints it through the
// same FormatReport, and exits with the same code, as a local `gpuscope health`.
//
// The text comes from the network: sizes and depth are bounded, every field's
// type is checked, an error names the field, and every string is made safe to
// print (base::TerminalText: no control characters, no line breaks). Checks are matched by name
// (CheckName), so an agent with a check this build does not know keeps the
// known ones; a GPU's check that is absent was not evaluated.
//
// Thread safety: pure functions.
#pragma once

#include <set>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"
#include "health/checks.h"

namespace gpuscope::health {

Result<HealthReport> ParseJson(std::string_view text);

// Keeps only the GPUs with these NVML indices and judges the node verdict over
// them, as a local `health -i` does (the agent's /api/v1/health?id=: it
// resolves the ids, MIG UUIDs included, against its own devices).
void KeepGpus(HealthReport& report, const std::set<unsigned>& indices);

}  // namespace gpuscope::health
