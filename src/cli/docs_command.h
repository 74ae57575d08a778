// `gpuscope docs metrics|configuration`: prints the generated reference
// documents, docs/metrics.md (from the metric catalog, RenderMetricsDoc) and
// docs/configuration.md (from serve's settings table, ConfigurationDoc). Unit
// tests check the committed files equal this output.
//
// Thread safety: runs on main's thread; the generators are pure.
#pragma once

#include <string>

#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// The document named `name` ("metrics", "configuration"); kInvalidArgument
// listing the names otherwise.
Result<std::string> GeneratedDoc(const std::string& name);

Status RunDocs(Invocation& inv);

}  // namespace gpuscope::cli
