// The chargeback table (`gpuscope report tenants --prometheus URL`) from any
// Prometheus-compatible API: one JobUsage per holder, as the agent's ledger
// gives them, built with PromQL over the lookback range (docs/reports.md).
//
// Works in both --attribution-labels modes, as the tenant rules do
// (deploy/prometheus/rules/gpu-tenants.yml, gpuscope:gpu_holder:info): the
// holders of each whole GPU come from gpuscope_gpu_holder_info (info mode)
// or from the holder labels on gpuscope_gpu_info / gpuscope_gpu_lost (series
// mode); each GPU value is folded to one per (instance, gpu, uuid) and joined
// to its holders weighted by their share, as the ledger splits it: where the
// agent measured gpuscope_gpu_holder_sm_share_ratio, the holder's part of all
// the processes' use plus an even part of the use no holder's processes made;
// else 1/holders. Each device row's split says which
// (DeviceUsage::split, from the steps the GPU was shared and measured). The
// rules are inlined (subqueries at the scrape interval), so no recording rule
// needs to have run over the range.
//
// Per holder and GPU, with S the scrape interval (the subquery step):
//   held       sum over the steps of the holder's share x S
//   busy, energy, idle-held
//              sum over the steps where the holder holds the GPU of the
//              GPU counter's increase over the step (counter - counter
//              offset S, clamped at 0 across restarts) x the share
// Accuracy: each end of a holder's span is known to one interval, so every
// quantity is off by at most one interval's worth per GPU and end.
// Whole GPUs only (gpu_instance=""), like the rules: MIG instances' holders
// are not counted here (the agent source counts them).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "gpuscope/status.h"
#include "jobs/ledger.h"

namespace gpuscope::jobs {

struct TenantsQuery {
  std::string by = "workload";       // "job", "pod" or "workload": one row per holder of it
  double range_seconds = 7 * 86400;  // --since
  double step_seconds = 15;          // --scrape-interval
};

// The instant queries, in the order TenantsFromAnswers takes their answers.
// Errors: an unknown kind.
Result<std::vector<std::string>> TenantsQueries(const TenantsQuery& query);

// One JobUsage per holder seen over the range (running first, then by
// start, as the ledger lists them). `now`: when the queries were evaluated
// (a holder seen within 3 steps of it is still running).
Result<std::vector<JobUsage>> TenantsFromAnswers(
    const TenantsQuery& query, const std::vector<std::vector<baseline::Sample>>& answers,
    double now);

}  // namespace gpuscope::jobs
