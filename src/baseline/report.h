// The `gpuscope baseline` report: per workload key and signal, the band
// (p5, p50, p95), the spread, the current 5-minute value, the deviation in
// spreads and a verdict, from the recorded series of the baseline rules.
//
//   verdict        when
//   warming-up     the key has less than the warm-up history (no alert either)
//   no-current     no 5-minute aggregate in the last 10 minutes
//   below, above   |deviation| >= k in the signal's bad direction (the alert
//                  also wants it sustained)
//   unusual        |deviation| >= k the other way, or on a signal without one
//   normal         otherwise
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "baseline/signals.h"
#include "gpuscope/status.h"

namespace gpuscope::baseline {

struct ReportOptions {
  int window_days = 14;
  int baseline_interval_minutes = 60;
  double k = 3;
  std::string workload;                            // only this workload; "" all
  std::vector<Signal> signals = DefaultSignals();  // floors and directions by name
};

struct Row {
  std::string namespace_, workload, hpc_job, model, signal;
  std::optional<double> p5, p50, p95, spread, history_days, current, deviation;
  bool warming_up = true;
  std::string verdict;
};

// The instant queries the report needs, in the order BuildReport takes their answers.
std::vector<std::string> ReportQueries(const ReportOptions& options);

// Joins the answers by key and signal; rows sorted by key, then signal.
std::vector<Row> BuildReport(const ReportOptions& options,
                             const std::vector<std::vector<Sample>>& answers);

std::string RenderText(const ReportOptions& options, const std::vector<Row>& rows);
std::string RenderJson(const ReportOptions& options, const std::string& url,
                       const std::vector<Row>& rows);

}  // namespace gpuscope::baseline
