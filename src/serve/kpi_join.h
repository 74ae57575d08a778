// The application side of `gpuscope serve`, off the sampling cycle: the OTLP
// store's families (every series attributed to its GPUs), the kpi_regression
// tracker and the KPIs per GPU for the web API, joined on a thread of their
// own and published as one immutable KpiResult (an atomic shared_ptr).
//
// The sampler's publish hook only calls Wake() (base/latest_worker.h) and
// renders whatever Latest() holds, so no amount of application data can make
// a sampling cycle late: the join's cost lands on its own thread, and at worst
// the application families lag. Each join reads the latest attributed
// snapshot and diagnoses (Inputs), runs once per Wake at most, and after a
// join that took d seconds waits at least kIdleFactor x d before the next, so
// it uses at most 1 / (1 + kIdleFactor) of a core however large the store.
//
// Bounded: the store's families are cut, at series boundaries, to
// `max_metrics_bytes` (headers included); what is cut is counted in
// gpuscope_otlp_series_omitted_active{limit="metrics_bytes"}. kpi_regression follows
// at most RegressionOptions::max_keys keys (the rest counted under
// limit="regression_keys"); the KPIs for the web API are as many at most. The
// readings are matched to their findings through an index, so a join is
// O(readings + findings) (times a log), never their product.
//
// Thread safety: Wake, Latest and joins() may be called from any thread;
// RunOnce from one thread at a time (the join thread once Start ran, or a
// test without it). Start and Stop from one thread (the agent's main thread).
// Locks: a join takes the store's and the diagnosis monitor's locks, one at a
// time, holding none of ours (the worker's is a leaf).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "analysis/report.h"
#include "base/latest_worker.h"
#include "collect/sampler.h"
#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "otlp/regression.h"
#include "otlp/store.h"
#include "web/api.h"

namespace gpuscope::serve {

struct KpiJoinOptions {
  otlp::RegressionOptions regression;
  // The store's families on /metrics at most (default 1 MiB; one sender at
  // most its otlp-sender-share of it): a sender on many GPUs is written once
  // per GPU, so this is what bounds the body.
  std::size_t max_metrics_bytes = 1 << 20;
  bool receiver_metrics = true;  // false: no gpuscope_otlp_* (no receiver listens)
};

// One join's output, immutable once published.
struct KpiResult {
  std::vector<prom::Family> families;  // the store's (cut), the kpi_regression ones, omissions
  std::vector<web::KpiReading> kpis;   // per GPU, for /api/v1 (at most max_keys)
};

// The store's families cut to `max_bytes` at series boundaries (pure); adds
// the series left out to `*omitted`. Families without preformatted lines (the
// receiver's self-metrics) are kept whole.
std::vector<prom::Family> CapFamilies(std::vector<prom::Family> families, std::size_t max_bytes,
                                      uint64_t* omitted);

// The attributed readings with the finding of each (pure; indexed, O(R + F)
// times a log); at most `max` of them.
std::vector<web::KpiReading> KpisOf(const std::vector<otlp::KpiReading>& readings,
                                    const std::vector<otlp::KpiFinding>& findings, std::size_t max);

class KpiJoin {
 public:
  struct Inputs {
    SnapshotPtr snapshot;  // attributed; null: nothing to join yet
    std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> diagnoses;  // null: none
  };
  using InputSource = std::function<Inputs()>;
  static constexpr double kIdleFactor = 4;

  KpiJoin(KpiJoinOptions options, otlp::Store& store, InputSource inputs, collect::Clock clock);
  ~KpiJoin();  // Stop()
  KpiJoin(const KpiJoin&) = delete;
  KpiJoin& operator=(const KpiJoin&) = delete;

  void Start();
  void Stop();  // idempotent
  // Asks for a join with the latest inputs; O(1), never waits for a join.
  void Wake();
  // One join now, on the calling thread.
  void RunOnce();

  // The latest result (empty before the first join); never null.
  std::shared_ptr<const KpiResult> Latest() const { return latest_.load(); }
  uint64_t joins() const { return joins_.load(std::memory_order_relaxed); }

 private:
  KpiJoinOptions options_;
  otlp::Store& store_;
  InputSource inputs_;
  collect::Clock clock_;
  otlp::RegressionTracker tracker_;  // only RunOnce's thread
  std::atomic<std::shared_ptr<const KpiResult>> latest_{std::make_shared<const KpiResult>()};
  std::atomic<uint64_t> joins_{0};
  // Last: its thread runs RunOnce, so it stops before the members above go.
  base::LatestWorker<std::monostate> worker_{[this](std::monostate&) { RunOnce(); }, kIdleFactor};
};

}  // namespace gpuscope::serve
