// The exporter core of `gpuscope serve`: once per sampler cycle (the publish
// hook) it builds one immutable Cycle (cycle.h) from the snapshot the sampler
// published, already decorated with host name and attribution (Decorate runs
// as the sampler's decorator, so nothing copies a snapshot to patch it): the
// health step (XIDs and verdicts, JudgeCycle in health.h), the diagnosis
// monitor's latest verdicts, the KPI join's last result (KpiSource: a pointer
// load, its size bounded by the join) and the self-metrics. It publishes the
// Cycle by one atomic pointer swap; /metrics renders its bodies lazily, on the
// first scrape that asks for each format, and never touches NVML.
//
// With --process-names off, the process names are left out of the cycle's
// health report and diagnoses once, when it is built, not per request.
//
// Self-metrics (rendered with every metrics set; names, types, help and labels
// in the family registry, export/builtin_families.h, group kSelf): build info,
// NVML up, collector up per device, NVML call errors by call and code (from
// the snapshot's per-GPU counts), cycle duration and time, scrapes, and with
// an event thread its up state and wait errors.
// gpuscope_scrapes_total (and gpuscope_scrapes_gzip_total, the gzipped ones) is counted per scrape
// (one atomic increment) but published with the next cycle, so a scrape stays a pointer
// copy: the value lags by at most one collect interval and never needs NVML. With a frozen clock
// (golden tests) the collect duration reads 0.
//
// Thread safety: Decorate and OnSnapshot run on the sampler thread; every
// other method may be called from any thread (the cycle is an atomic
// shared_ptr, the rest is under a mutex).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/monitor.h"
#include "collect/sampler.h"
#include "export/counters.h"
#include "export/render.h"
#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"
#include "health/checks.h"
#include "health/events.h"
#include "health/families.h"
#include "serve/cycle.h"
#include "serve/kpi_join.h"

namespace gpuscope::serve {

struct ExporterOptions {
  prom::RenderOptions render;
  health::HealthOptions health;
  health::FamilyOptions health_families;
  analysis::MonitorOptions monitor;
  std::string hostname;       // replaces the snapshot's host name when not empty
  double stale_after_s = 3;   // /health: a cycle older than this is stale
  bool frozen_clock = false;  // durations render as 0 (deterministic output)
};

// Why /health answers what it answers.
struct HealthVerdict {
  bool ok = false;
  std::string reason;  // "OK" or one sentence
};

// /health's rule for the GPUs of a fresh cycle: healthy while at least one GPU
// that is not lost was read within `stale_after_s` of `now` (pure).
HealthVerdict GpuFreshness(const Snapshot& snapshot, double now, double stale_after_s);

// The self-metric families for a snapshot (pure; see the header comment);
// `events` is the event thread's state, nullptr when there is none.
struct ScrapeCounts {
  uint64_t all = 0, gzip = 0;
};
std::vector<prom::Family> SelfFamilies(const Snapshot& snapshot, ScrapeCounts scrapes,
                                       bool frozen_clock,
                                       const health::EventState* events = nullptr);

// How the health module renders DCGM_EXP_XID_ERRORS_COUNT and
// DCGM_EXP_GPU_HEALTH_STATUS: each only when the counters file lists it, with
// the file's type and help.
health::FamilyOptions XidFamilyOptions(const prom::CounterSet& counters);

class Exporter {
 public:
  using EventSource = std::function<health::EventState()>;
  using AttributionSource = std::function<AttributionPtr()>;
  // The KPI join's last result (application families and KPIs), already built and bounded
  // off the sampling cycle (serve/kpi_join.h); the hook only loads it (null: none yet).
  using KpiSource = std::function<std::shared_ptr<const KpiResult>()>;
  // More families rendered last (the remediation counters); cheap, never blocking.
  using FamilySource = std::function<std::vector<prom::Family>()>;

  Exporter(ExporterOptions options, collect::Clock clock);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // The sampler's decorator: the configured host name and the attribution.
  void Decorate(Snapshot& snapshot);
  // The publish hook: builds and publishes the Cycle of `snapshot`.
  void OnSnapshot(const SnapshotPtr& snapshot, const Window& window);

  // The latest cycle; null before the first.
  CyclePtr Current() const { return current_.load(); }
  void CountScrape(bool gzip = false) {
    scrapes_.fetch_add(1, std::memory_order_relaxed);
    if (gzip) gzip_scrapes_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }
  uint64_t gzip_scrapes() const { return gzip_scrapes_.load(std::memory_order_relaxed); }

  // /health's verdict now: NVML up, a fresh cycle, and fresh data for at least
  // one GPU (GpuFreshness).
  HealthVerdict Health() const;

  // SIGHUP: serve this counters set from now on (republishes the last cycle).
  void SetCounters(prom::CounterSet counters);
  // Where XID and other event counts come from (null: none yet).
  void SetEventSource(EventSource source);
  // Whose work each GPU serves (null: no attribution labels): read by every
  // Decorate, so a refreshed map shows from the next cycle on.
  void SetAttributionSource(AttributionSource source);
  // Application families and KPIs (null: none). The source must not build
  // anything: it runs under mu_ on the sampler thread.
  void SetKpiSource(KpiSource source);
  // Families appended after all others (null: none); runs under mu_ on the
  // sampler thread, so it must only copy what is ready.
  void SetFamilySource(FamilySource source);

 private:
  struct State;
  // Builds, observes and publishes a cycle with the current renderer and KPIs.
  void PublishLocked(SnapshotPtr snapshot, std::shared_ptr<const health::HealthReport> health,
                     std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> diagnoses);
  // The families rendered after the snapshot's (Cycle::families).
  std::vector<prom::Family> Families(const Cycle& cycle) const;

  collect::Clock clock_;
  std::mutex mu_;  // the state below
  std::unique_ptr<State> state_;
  std::atomic<CyclePtr> current_;
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<uint64_t> gzip_scrapes_{0};
  const double stale_after_s_;
};

}  // namespace gpuscope::serve
