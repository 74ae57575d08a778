// The exporter core of `gpuscope serve`: once per sampler cycle (the publish
// hook) it takes a copy of the snapshot, runs the health step on it (XIDs and
// verdicts, JudgeCycle in health.h), updates the diagnosis monitor, builds the
// self-metrics, takes the application families as last built off the cycle
// (AppSource: a pointer load, their size bounded by the KPI join) and renders the 0.0.4 and
// OpenMetrics bodies once; scrapes then pick the pre-rendered bodies (an atomic shared_ptr load)
// and never touch NVML. A body is gzipped at most once per cycle, by the first scrape of that cycle
// that asks for gzip (Published::Gzipped); compressing eagerly would cost every cycle the CPU of
// both formats even when Prometheus scrapes every 15 s.
//
// Self-metrics (rendered with every metrics set; names, types, help and labels
// in the family registry, export/builtin_families.h, group kSelf): build info,
// NVML up, collector up per device, NVML call errors by call and code (from
// the snapshot's per-GPU counts), cycle duration and time, scrapes, and with
// an event thread its up state and wait errors.
// gpuscope_scrapes_total (and gpuscope_scrapes_gzip_total, the gzipped ones) is counted per scrape
// (one atomic increment) but published with the next cycle's body, so a scrape stays a pointer
// copy: the value lags by at most one collect interval and never needs NVML. With a frozen clock
// (golden tests) the collect duration reads 0.
//
// Thread safety: OnSnapshot runs on the sampler thread; every other method may
// be called from any thread (the body and health state are atomic
// shared_ptrs, the rest is under a mutex).
#pragma once

#include <array>
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

// One cycle's bodies, plain and, on demand, gzipped.
class Published {
 public:
  explicit Published(prom::Bodies bodies) : bodies_(std::move(bodies)) {}
  const prom::Bodies& plain() const { return bodies_; }
  // The gzip body of `format`: compressed by the first caller, shared after.
  std::shared_ptr<const std::string> Gzipped(prom::Format format) const;

 private:
  prom::Bodies bodies_;
  mutable std::array<std::once_flag, 2> once_;
  mutable std::array<std::shared_ptr<const std::string>, 2> gzip_;
};

class Exporter {
 public:
  using EventSource = std::function<health::EventState()>;
  using AttributionSource = std::function<AttributionPtr()>;
  // Application families (KPIs and their regressions), already built and bounded off the
  // sampling cycle (serve/kpi_join.h); the hook only loads them (null: none yet).
  using AppSource = std::function<std::shared_ptr<const std::vector<prom::Family>>()>;

  Exporter(ExporterOptions options, collect::Clock clock);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // The publish hook: renders the bodies for `snapshot`.
  void OnSnapshot(const SnapshotPtr& snapshot, const Window& window);

  // The latest bodies; null before the first cycle.
  std::shared_ptr<const prom::Bodies> Bodies() const;
  std::shared_ptr<const Published> Current() const { return bodies_.load(); }
  void CountScrape(bool gzip = false) {
    scrapes_.fetch_add(1, std::memory_order_relaxed);
    if (gzip) gzip_scrapes_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }
  uint64_t gzip_scrapes() const { return gzip_scrapes_.load(std::memory_order_relaxed); }

  // The latest published snapshot (host name and attribution applied), the
  // health report and the diagnoses of that cycle, for the web API (web/api.h);
  // null / empty before the first cycle.
  SnapshotPtr Latest() const { return last_.load(); }
  std::shared_ptr<const health::HealthReport> LatestHealth() const { return report_.load(); }
  std::vector<analysis::GpuDiagnosis> LatestDiagnoses() const;

  // /health's verdict now: NVML up, a fresh cycle, and fresh data for at least
  // one GPU (GpuFreshness).
  HealthVerdict Health() const;

  // SIGHUP: serve this counters set from now on (re-renders the last snapshot).
  void SetCounters(prom::CounterSet counters);
  // Where XID and other event counts come from (null: none yet).
  void SetEventSource(EventSource source);
  // Whose work each GPU serves (null: no attribution labels): read at every
  // render, so a refreshed map shows from the next cycle on.
  void SetAttributionSource(AttributionSource source);
  // Application families, rendered after the others at every cycle (null: none). The
  // source must not build anything: it runs under mu_ on the sampler thread.
  void SetAppSource(AppSource source);

 private:
  struct State;
  std::shared_ptr<const Published> RenderLocked();

  collect::Clock clock_;
  std::mutex mu_;  // renderer, health state, last inputs, event source
  std::unique_ptr<State> state_;
  std::atomic<std::shared_ptr<const Published>> bodies_;
  std::atomic<std::shared_ptr<const Snapshot>> last_;  // for Health()
  std::atomic<std::shared_ptr<const health::HealthReport>> report_;
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<uint64_t> gzip_scrapes_{0};
  const double stale_after_s_;
};

}  // namespace gpuscope::serve
