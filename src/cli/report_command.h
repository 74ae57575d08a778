// `gpuscope report`: what a job used, wasted and should ask for next time
// (docs/reports.md).
//
//   gpuscope report job ID | pod NS/NAME | workload NAME --agent URL
//                   [--json | --markdown] [--gpu-hour-price P] [--thresholds FILE]
//   gpuscope report tenants --agent URL | --prometheus URL [--since 7d]
//                   [--by namespace|workload|job|pod] [...]
//   gpuscope report job ID ... --prometheus URL [--since 7d] [--scrape-interval 15s]
//
// --agent reads a running `gpuscope serve`'s /api/v1/jobs (its job ledger,
// jobs/ledger.h), so a Slurm epilog can report a job with no time-series
// database. An unknown job is an error that names it; an unreachable agent
// is an error that names the URL. --prometheus builds the same report from
// the series gpuscope exports (jobs/prom_source.h), for jobs across nodes and
// history past the agent's. TLS and basic auth as `gpuscope diagnose`.
//
// Thread safety: runs on main's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "cli/commands.h"
#include "gpuscope/status.h"
#include "jobs/report.h"

namespace gpuscope::cli {

struct ReportArgs {
  std::string what;  // "job", "pod", "workload" or "tenants"
  std::string id;    // empty for tenants
  bool json = false, markdown = false, help = false;
  std::optional<double> gpu_hour_price;
  std::string thresholds_file;  // empty: the built-in thresholds
  double since_seconds = 7 * 86400;
  std::string by = "workload";          // tenants: which holders make rows (or "namespace")
  baseline::ClientOptions agent;        // --agent URL or --prometheus URL, and its TLS/auth
  bool prometheus = false;              // the URL is a Prometheus-compatible API's
  double scrape_interval_seconds = 15;  // --scrape-interval (Prometheus source)
};

// Parses the arguments after `report` (common options already removed).
Result<ReportArgs> ParseReportArgs(const std::vector<std::string>& args);
std::string ReportUsage();
// A --thresholds file (jobs::ParseThresholds); the built-in ones for "".
Result<jobs::NoteThresholds> LoadThresholds(const std::string& path);
Status RunReport(Invocation& inv);

}  // namespace gpuscope::cli
