// `gpuscope version`: the version and how this binary was built.
// Thread safety: pure.
#pragma once

#include <string>

#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// "gpuscope 0.1.0\n" followed by build lines (compiler, flavour, NVML
// loading, simulator location).
std::string VersionText(const std::string& exe_dir);

Status RunVersion(Invocation& inv);

}  // namespace gpuscope::cli
