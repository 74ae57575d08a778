// Output of `gpuscope health`: the report as text for a person (per GPU: the
// verdict, the evidence behind each check and what to do) or as JSON for
// scripts. The exit code `gpuscope health` gives a verdict is in the CLI's
// one table (src/cli/exit_codes.h).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "health/checks.h"

namespace gpuscope::health {

struct ReportOptions {
  bool verbose = false;  // also list the evidence of checks that are ok
};

std::string FormatReport(const HealthReport& report, const ReportOptions& options = {});
// One JSON object: {"verdict", "hostname", "timestamp", "nvml_up", "gpus": [{"gpu", "uuid",
// "verdict", "lost", "stale", "checks": {"memory": {"verdict", "evidence", "action"}, ...},
// "xid": {"total": {...}, "window": {...}, "last": n}}]}. Checks not evaluated are omitted.
std::string FormatJson(const HealthReport& report);

}  // namespace gpuscope::health
