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
// Bounded whatever the senders do: at most `max_keys` (family, GPU, workload)
// keys are followed (the first seen; the others are counted in untracked()
// and judged once a followed key expires), and each keeps at most
// `max_points` totals. An eighth of them cover the recent span, finely spaced
// so that it starts where asked (within recent_s / 30 by default); the rest
// only start baselines and are spread over baseline_s. The newest is always
// current: it replaces the previous newest while that one is closer than the
// fine spacing. Update is O(readings log keys), plus moving a key's recent
// totals when one of them is thinned; Evaluate O(keys log max_points).
//
// Thread safety: not thread-safe (serve's KPI join, serve/kpi_join.h, owns
// one and calls it from its own thread).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "export/family.h"
#include "otlp/store.h"

namespace gpuscope::otlp {

struct RegressionOptions {
  double recent_s = 120;         // the recent level: mean over this span (default 2 min)
  double baseline_s = 3600;      // against the mean over up to this span before (default 1 h)
  double min_change = 0.2;       // relative rise that counts (default 20%)
  double min_count = 10;         // observations needed in each span
  std::size_t max_keys = 1024;   // (family, GPU, workload) keys followed (default 1024)
  std::size_t max_points = 256;  // totals kept per key (default 256)
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

  // Keys of the last Update not followed because max_keys were.
  std::size_t untracked() const { return untracked_; }
  // Totals kept over all keys (at most max_keys x max_points).
  std::size_t points() const;

 private:
  struct Totals {
    double t = 0, count = 0, sum = 0;
  };
  using Key = std::tuple<std::string, int, std::string>;  // family, rank, workload
  struct History {
    Kpi kpi = Kpi::kNone;
    std::vector<Totals> totals;  // oldest first, at most max_points
    std::size_t coarse = 0;      // totals[0, coarse): older than the recent span, thinned
  };
  void Record(History& h, const Totals& totals, double now) const;

  RegressionOptions options_;
  std::map<Key, History> history_;
  std::size_t untracked_ = 0;
};

}  // namespace gpuscope::otlp
