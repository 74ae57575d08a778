// `gpuscope baseline`: per-workload baselines kept by Prometheus
// (docs/baselines.md).
//
//   gpuscope baseline --prometheus URL [--json] [--workload NAME] [--window 14d] [--k 3]
//                     [--ca-file PEM] [--cert-file PEM --key-file PEM]
//                     [--basic-auth-user USER --basic-auth-password-file FILE]
//     per workload key (namespace, workload, hpc_job, model) and signal: the
//     p5-p95 band, median, current value, deviation in spreads, verdict.
//   gpuscope baseline rules [--signal NAME:DIRECTION:FLOOR:EXPR]... [--no-default-signals]
//                           [--window 14d] [--warmup 7d] [--k 3] [--sustain 60m]
//                           [--interval 60m]
//     prints the recording and alert rules (Prometheus rule-file YAML).
//
// Thread safety: runs on main's thread.
#pragma once

#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "baseline/report.h"
#include "baseline/rules.h"
#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct BaselineArgs {
  bool rules = false;  // the `rules` form
  bool help = false;
  bool json = false;
  baseline::ClientOptions client;
  baseline::ReportOptions report;
  baseline::RuleOptions rule;
};

Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args);
std::string BaselineUsage();
Status RunBaseline(Invocation& inv);

}  // namespace gpuscope::cli
