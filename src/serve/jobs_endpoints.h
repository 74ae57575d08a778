// /api/v1/jobs on serve's listener (behind the same TLS and basic auth as
// /metrics): what each Slurm job, pod and workload used since the agent first
// saw it (jobs/ledger.h; docs/api.md, "Jobs").
//   /api/v1/jobs                    every holder kept: {"jobs": [...], "attribution":
//                                   which sources could name them}
//   /api/v1/jobs?kind=job           only Slurm jobs (pod, workload likewise)
//   /api/v1/jobs?kind=job&id=4242   one holder's object; 404 naming it when unknown
//
// Thread safety: handlers run on server threads; the Ledger locks itself.
#pragma once

#include "http/server.h"
#include "jobs/attribution_switches.h"
#include "jobs/ledger.h"

namespace gpuscope::serve {

// Registers the routes on `server` (before Start); `ledger` outlives it.
void RegisterJobsEndpoints(http::Server& server, const jobs::Ledger& ledger,
                           jobs::AttributionSwitches attribution);

}  // namespace gpuscope::serve
