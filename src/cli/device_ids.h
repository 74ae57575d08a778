// `-i IDS` of `health` and `diagnose`, here and against an agent (--agent):
// one selection (collect/selection.h) and one answer for an id that names
// nothing, `-i: no GPU matches id "9"` (exit 6), in both places.
//
// Thread safety: plain functions (the CLI's main thread).
#pragma once

#include <string>

#include "baseline/prom_client.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// NotFound `-i: no GPU matches id ...` when an id names no device of the node
// behind `library`; Ok otherwise, also when the library does not open (that
// is the caller's to report). `mig_selects_gpu`: health's reading of a MIG
// UUID (its GPU).
Status CheckIdsHere(const std::string& library, const std::string& ids, bool mig_selects_gpu);

// GET `path` of the agent with `id=IDS` added to `query` (`a=b&...`, may be
// empty). A malformed list is a usage error here, before asking; the agent's
// 404 for an id that names nothing becomes the message a local run prints.
Result<std::string> GetWithIds(const baseline::PromClient& client, const std::string& path,
                               std::string query, const std::string& ids);

}  // namespace gpuscope::cli
