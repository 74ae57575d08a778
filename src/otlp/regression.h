// The `kpi_regression` finding: an application KPI (a duration histogram of
// kpi.h, per GPU and workload) whose recent mean moved against its own
// earlier level, named with the size of the change and the GPU findings that
// coincide on the same GPU, or "no GPU cause found".
//
// Every cycle Update() records each KPI's running totals (count, sum) per GPU
// and workload; Evaluate() compares the mean over the last `recent_s` with
// the mean over up to `baseline_s` before it. A regression is a rise of at
// least `min_change` (durations: higher is worse) with at least `min_count`
// observations in each span and a baseline span at least as long as the
// recent one. A counter reset (count going down) restarts the history.
//
// Thread safety: not thread-safe (serve's exporter calls it under its lock).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "export/family.h"
#include "otlp/store.h"

namespace gpuscope::otlp {

struct RegressionOptions {
  double recent_s = 120;     // the recent level: mean over this span (default 2 min)
  double baseline_s = 3600;  // against the mean over up to this span before (default 1 h)
  double min_change = 0.2;   // relative rise that counts (default 20%)
  double min_count = 10;     // observations needed in each span
};

struct KpiFinding {
  int rank = -1;  // snapshot slot of the GPU
  std::string family;
  Kpi kpi = Kpi::kNone;
  std::string workload;
  double recent = 0, baseline = 0;  // means, seconds
  double change = 0;                // recent / baseline - 1
  bool regressed = false;
  std::vector<std::string> causes;  // coinciding GPU findings on the GPU ("thermal_throttle")
  std::string verdict;              // one line: the KPI, the change, the causes
};

class RegressionTracker {
 public:
  explicit RegressionTracker(RegressionOptions options = {}) : options_(options) {}

  void Update(const std::vector<KpiReading>& readings, double now);

  // The KPIs with enough history; `causes[rank]` the GPU findings of each GPU now.
  std::vector<KpiFinding> Evaluate(double now,
                                   const std::vector<std::vector<std::string>>& causes) const;

  // gpuscope_kpi_regression_active and gpuscope_kpi_change_ratio for `findings`.
  static std::vector<prom::Family> Families(const std::vector<KpiFinding>& findings);

 private:
  struct Totals {
    double t = 0, count = 0, sum = 0;
  };
  using Key = std::tuple<std::string, int, std::string>;  // family, rank, workload
  struct History {
    Kpi kpi = Kpi::kNone;
    std::deque<Totals> totals;  // oldest first, one per Update
  };

  RegressionOptions options_;
  std::map<Key, History> history_;
};

}  // namespace gpuscope::otlp
