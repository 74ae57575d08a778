// The application series the OTLP receiver keeps, and their export.
//
// Ingest() adds a decoded batch: a cumulative point replaces its series'
// value, a delta point adds to it (a delta histogram with other bounds than
// the series' restarts it). A point is refused by itself (counted, and named
// in the partial-success message) when (docs/app-kpis.md, "Limits"):
// - it is not valid exposition or is over the label limits (admission.h);
// - its family would write a name another family writes (a histogram `x`
//   and a gauge `x_count`), or a name reserved for a known KPI family, or its
//   family already has another type (first come keeps a generic name);
// - its series would go over a budget: `max_series` series and `max_bytes`
//   bytes (SeriesCost, admission.h) in all, `max_series_bytes` for one
//   series, a `sender_share` of both (at least `min_sender_series` and
//   `min_sender_bytes`) for one sender, and the last `kpi_reserve` of both
//   only for the known KPIs. A sender is the request's peer (otlp/peer.h:
//   its address, and for a local one its uid), which it cannot choose; the
//   resource attributes (service.name, host.name) only when the peer is
//   unknown. Refusals for a sender's share are logged, at most once a minute.
// Series not updated for `expiry_s` are dropped.
//
// Families() runs on serve's KPI join thread (serve/kpi_join.h): it resolves
// every sender to its GPUs through the snapshot (resolve.h) and writes the
// application families (gauges, counters, histograms as histograms) with the
// labels gpu, UUID, workload, namespace, pod, service, service_instance_id,
// process_pid, host_name (those known), then the point's own attributes, plus
// the receiver's self-metrics (gpuscope_otlp_*).
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "otlp/admission.h"
#include "otlp/decode.h"
#include "otlp/resolve.h"

namespace gpuscope::otlp {

struct StoreOptions {
  std::size_t max_series = 10000;  // series kept at most (default 10000)
  // SeriesCost summed over every series, at most (default 16 MiB).
  std::size_t max_bytes = std::size_t{16} << 20;
  // One series' SeriesCost at most (default 32 KiB).
  std::size_t max_series_bytes = std::size_t{32} << 10;
  // The part of max_series and max_bytes one sender may hold (default 0.125), but at least
  // min_sender_series series and min_sender_bytes bytes (defaults 100 and 256 KiB).
  double sender_share = 0.125;
  std::size_t min_sender_series = 100;
  std::size_t min_sender_bytes = std::size_t{256} << 10;
  // The last part of max_series and max_bytes, kept for the known KPI families (default 0.1).
  double kpi_reserve = 0.1;
  PointLimits limits;     // label and name limits (defaults in admission.h)
  double expiry_s = 300;  // a series not updated for this long is dropped (default 5 min)
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

  // `sender`: the request's peer (PeerKey, peer.h); "" when unknown (the
  // resource's service.name and host.name stand in).
  IngestResult Ingest(const Batch& batch, double now, const std::string& sender = "");
  // A request refused as a whole (with its HTTP status), for gpuscope_otlp_requests_total.
  void CountRequest(int status);
  void CountRejected(uint64_t points);

  // The application families and the receiver's self-metrics for `snapshot`
  // (attributed); drops expired series. A series is written once per GPU it
  // is attributed to, so the lines are bounded here, not by the store's byte
  // budget: series lines past about `max_bytes`, or past a sender's
  // `sender_share` of it (at least `min_sender_bytes`, but never more than a
  // quarter of it), are not built (their readings neither) and are counted in
  // `*omitted`.
  std::vector<prom::Family> Families(const Snapshot& snapshot, double now,
                                     std::size_t max_bytes = SIZE_MAX, uint64_t* omitted = nullptr);

  // The KPI histograms per GPU as of the last Families() call.
  std::vector<KpiReading> Readings() const;

  std::size_t series() const;
  // SeriesCost summed over every series kept.
  std::size_t bytes() const;

 private:
  struct Series {
    Origin origin;
    Labels labels;
    double value = 0;
    HistogramValue histogram;
    double updated = 0;
    std::size_t cost = 0;  // SeriesCost when last updated
    std::string sender;    // the budget it is charged to (SenderOf)
  };
  struct Usage {
    std::size_t series = 0, bytes = 0;
  };
  struct FamilyState {
    Kind kind = Kind::kGauge;
    Kpi kpi = Kpi::kNone;
    std::string help;
    std::map<std::string, Series> series;  // by origin and labels
  };
  Status Add(const Origin& origin, const std::string& sender, const Point& point, double now);
  Status CheckName(const Point& point) const;
  // Whether a series may grow by `growth` bytes to `cost` (a new one: from 0).
  Status Admit(const Point& point, const std::string& sender, std::size_t growth, std::size_t cost,
               bool new_series) const;
  // What one sender may hold.
  std::size_t SenderSeries() const;
  std::size_t SenderBytes() const;
  void LogShareRefusal(const std::string& why, double now);
  Status Update(Series& series, const Point& point, std::size_t cost, double now);
  std::map<std::string, FamilyState>::iterator NewFamily(const Point& point);
  void Charge(const std::string& sender, int series, std::ptrdiff_t bytes);
  void Expire(double now);
  // What Families() may still write: in all, and per sender (by SenderKey).
  struct RenderBudget {
    std::size_t total = 0, per_sender = 0;
    std::map<std::string, std::size_t> spent;
    uint64_t omitted = 0;
  };
  // Writes the family's lines within `budget` (spent), counting the series
  // left out.
  std::string RenderFamily(const std::string& name, const FamilyState& family,
                           const Resolver& resolver, std::vector<KpiReading>& readings,
                           RenderBudget& budget) const;
  std::vector<prom::Family> SelfFamilies() const;

  StoreOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, FamilyState> families_;
  std::map<std::string, std::string, std::less<>> claims_;         // name in /metrics -> family
  std::map<std::string, const KpiFamily*, std::less<>> reserved_;  // the KPI families' claims
  std::map<std::string, Usage> senders_;                           // by SenderOf
  std::size_t series_ = 0, bytes_ = 0;
  std::shared_ptr<const Resolver> resolver_;  // of the last cycle; null before the first
  std::vector<KpiReading> readings_;
  uint64_t accepted_ = 0, rejected_ = 0, unattributed_ = 0;
  uint64_t share_refused_ = 0;        // points refused for their sender's share since the last log
  double share_logged_at_ = -1;       // when that was last logged
  std::map<int, uint64_t> requests_;  // HTTP status -> requests
};

}  // namespace gpuscope::otlp
