// Generates the per-workload baseline rules (Prometheus rule-file YAML):
//
//   gpuscope-baselines-5m     interval 5m: one 5-minute aggregate per signal
//                             and workload key,
//                             gpuscope:workload_signal:avg5m{signal=...}
//   gpuscope-baselines-<W>d   interval 1h: over W days (14) of those
//                             aggregates, never of raw series: p5, p50, p95,
//                             a robust spread (IQR / 1.349, the standard
//                             deviation of a normal distribution with that
//                             IQR), days of history and warming_up (1 until
//                             the key has `warmup_days` of aggregates)
//   gpuscope-baselines-alerts one alert per signal with a bad direction: the
//                             deviation (current - median) / spread, with the
//                             least deviating 5-minute value of the last
//                             `sustain` past k spreads in that direction, and
//                             the key warm.
//
// deploy/prometheus/rules/gpu-baselines.yml is this output for the defaults
// (a test keeps them equal); `gpuscope baseline rules` prints it for other
// signals or windows. Design and cost: docs/baselines.md.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "baseline/signals.h"
#include "gpuscope/status.h"

namespace gpuscope::baseline {

struct RuleOptions {
  std::vector<Signal> signals = DefaultSignals();
  int window_days = 14;                // the baseline's history
  int warmup_days = 7;                 // history needed before any alert
  double k = 3;                        // spreads from the median that alert
  int sustain_minutes = 60;            // every 5-minute value that long past k
  int baseline_interval_minutes = 60;  // evaluation interval of the window group
};

// Checks ranges and unique names (InvalidArgument naming the problem).
Status ValidateRuleOptions(const RuleOptions& options);

// The rule file. Deterministic: same options, same bytes.
Result<std::string> RenderRules(const RuleOptions& options);

// Recorded series names for a window, e.g. Series("p50", 14) is
// "gpuscope:workload_signal:p50_14d"; "avg5m" ignores the window.
std::string SeriesName(const std::string& what, int window_days);

}  // namespace gpuscope::baseline
