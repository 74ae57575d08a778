// A holder's usage from Prometheus (or any Prometheus-compatible API:
// VictoriaMetrics, Thanos) instead of the agent's ledger: the same JobUsage,
// built from the series gpuscope exports, so the report is the same
// (`gpuscope report --prometheus URL`, docs/reports.md).
//
// Per device series of the holder (labels instance, gpu, uuid, gpu_instance,
// and hpc_job / namespace+pod / workload), over the lookback `range`:
//   held       last - first sample time (a subquery at the scrape interval)
//   busy, SM-active, energy, idle-held, throttled per reason
//              the counter's max - min over the range (counters only grow
//              while the agent runs; a restart inside the range undercounts)
//   peak and total memory
//              max_over_time of the gauges
// Accuracy depends on the scrape interval: each end of a device's span is
// known to one interval, so held and counter quantities are short by at most
// one interval's worth per device (2 x 15 s on a 1 h job: under 1%). A GPU
// shared by several holders is not split here (each holder's series carries
// the whole GPU): use the agent source or the tenant rules for shared GPUs.
// A MIG instance counts like a whole GPU.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "gpuscope/status.h"
#include "jobs/ledger.h"
#include "jobs/report.h"

namespace gpuscope::jobs {

struct PromQuery {
  std::string kind, id;              // "job" "4242"; "pod" "ns/name"; "workload" "trainer"
  double range_seconds = 7 * 86400;  // how far back to look
  double step_seconds = 15;          // the scrape interval
};

// The instant queries, in the order UsageFromAnswers takes their answers.
// Errors: a malformed pod name ("ns/name" wanted), an unknown kind.
Result<std::vector<std::string>> UsageQueries(const PromQuery& query);

// The holder from the answers; NotFound (naming it) when no series has it.
// `now`: the time the queries were evaluated (a holder whose last sample is
// within 3 steps of it is still running).
Result<JobUsage> UsageFromAnswers(const PromQuery& query,
                                  const std::vector<std::vector<baseline::Sample>>& answers,
                                  double now);

// The usage's devices (by device key), sorted by host and GPU; its start
// (the first device's first sample) and, when its last sample is older than
// 3 steps before `now`, its end. Shared with prom_tenants.
void SetDevices(const std::map<std::string, DeviceUsage>& devices, double step_seconds, double now,
                JobUsage& u);

// The baseline queries for the usage's workload (UsageFromAnswers sets its
// namespace, workload and hpc_job from the series): p5, p50 and warming-up
// of the sm_active signal; empty when the holder has no workload.
std::vector<std::string> BaselineQueries(const JobUsage& usage);
// The workload's baseline from their answers; nullopt while it warms up or
// when there is none.
std::optional<WorkloadBaseline> BaselineFromAnswers(
    const JobUsage& usage, const std::vector<std::vector<baseline::Sample>>& answers);

}  // namespace gpuscope::jobs
