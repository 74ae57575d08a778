// The --remediate* and --slurm-node settings of `gpuscope serve` turned into
// remediate::RemediationOptions (pure; docs/runbooks.md "Remediation").
// Errors name the setting: an unknown mode, an unknown finding name.
//
// Thread safety: a pure function.
#pragma once

#include "cli/settings.h"
#include "gpuscope/status.h"
#include "remediate/setup.h"

namespace gpuscope::cli {

Result<remediate::RemediationOptions> BuildRemediation(const Settings& s);

}  // namespace gpuscope::cli
