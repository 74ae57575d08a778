// The ledger's holders as JSON, both ways: what /api/v1/jobs answers and
// what `gpuscope report --agent` reads back (docs/api.md, "Jobs").
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuscope/status.h"
#include "jobs/ledger.h"

namespace gpuscope::jobs {

nlohmann::json UsageToJson(const JobUsage& usage);
// Errors name the field that is missing or of the wrong type.
Result<JobUsage> UsageFromJson(const nlohmann::json& json);

// /api/v1/jobs: {"jobs": [...]} in List order, with {"attribution": ...}
// when given (jobs/attribution_switches.h: which sources could name holders).
std::string JobsBody(const std::vector<JobUsage>& jobs,
                     const nlohmann::json& attribution = nullptr);
// Parses JobsBody's text; errors say what is wrong with it.
Result<std::vector<JobUsage>> ParseJobsBody(const std::string& body);

}  // namespace gpuscope::jobs
