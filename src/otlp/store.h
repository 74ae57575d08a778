// The application series the OTLP receiver keeps, and their export.
//
// Ingest() adds a decoded batch: a cumulative point replaces its series'
// value, a delta point adds to it (a delta histogram with other bounds than
// the series' restarts it). A new series beyond `max_series`, or a point
// whose family already has another type, is rejected by itself (counted, and
// named in the partial-success message). Series not updated for `expiry_s`
// are dropped.
//
// Families() runs once per sampler cycle (serve's exporter): it resolves
// every sender to its GPUs through the snapshot (resolve.h) and writes the
// application families (gauges, counters, histograms as histograms) with the
// labels gpu, UUID, workload, namespace, pod, service, service_instance_id,
// process_pid, host_name (those known), then the point's own attributes, plus
// the receiver's self-metrics (gpuscope_otlp_*).
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "otlp/decode.h"
#include "otlp/resolve.h"

namespace gpuscope::otlp {

struct StoreOptions {
  std::size_t max_series = 10000;  // series kept at most (default 10000)
  double expiry_s = 300;           // a series not updated for this long is dropped (default 5 min)
};

struct IngestResult {
  uint64_t accepted = 0, rejected = 0;
  std::string problem;  // the first reason a point was rejected
};

// One KPI reading of one GPU for the diagnosis: the totals of its histogram
// (count and sum) summed over the GPU's series, at the time of a cycle.
struct KpiReading {
  Kpi kpi = Kpi::kNone;
  std::string family;
  int rank = -1;  // snapshot slot of the GPU
  std::string workload;
  double count = 0, sum = 0;
};

class Store {
 public:
  explicit Store(StoreOptions options = {});

  IngestResult Ingest(const Batch& batch, double now);
  // A request refused as a whole (with its HTTP status), for gpuscope_otlp_requests_total.
  void CountRequest(int status);
  void CountRejected(uint64_t points);

  // The application families and the receiver's self-metrics for `snapshot`
  // (attributed); drops expired series.
  std::vector<prom::Family> Families(const Snapshot& snapshot, double now);

  // The KPI histograms per GPU as of the last Families() call.
  std::vector<KpiReading> Readings() const;

  std::size_t series() const;

 private:
  struct Series {
    Origin origin;
    Labels labels;
    double value = 0;
    HistogramValue histogram;
    double updated = 0;
  };
  struct FamilyState {
    Kind kind = Kind::kGauge;
    Kpi kpi = Kpi::kNone;
    std::string help;
    std::map<std::string, Series> series;  // by origin and labels
  };
  bool Add(const Batch& batch, const Point& point, double now, IngestResult& result);
  std::string RenderFamily(const std::string& name, const FamilyState& family,
                           const Resolver& resolver, std::vector<KpiReading>& readings) const;
  std::vector<prom::Family> SelfFamilies() const;

  StoreOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, FamilyState> families_;
  std::size_t series_ = 0;
  std::shared_ptr<const Resolver> resolver_;  // of the last cycle; null before the first
  std::vector<KpiReading> readings_;
  uint64_t accepted_ = 0, rejected_ = 0, unattributed_ = 0;
  std::map<int, uint64_t> requests_;  // HTTP status -> requests
};

}  // namespace gpuscope::otlp
