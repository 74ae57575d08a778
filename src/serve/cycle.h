// One sampling cycle as every consumer of `gpuscope serve` sees it: the
// snapshot (host name and attribution already applied by the sampler's
// decorator, so never copied), the health report, the diagnoses, the
// application KPIs and the families rendered after the snapshot's. The
// exporter builds it once per cycle on the sampler thread and publishes it by
// one atomic pointer swap; /metrics, /health, the web API and the KPI join
// only read it (docs/architecture.md).
//
// Bodies are rendered lazily: the first scrape of a cycle that asks for a
// format renders it (and the first that asks for gzip compresses it), later
// scrapes of the cycle share that string. An agent nobody scrapes renders
// nothing; one Prometheus scraping text every 15 s renders one body per scrape.
//
// Thread safety: a published Cycle is immutable; Body and Gzipped may be
// called from any thread (once per format, under the BodyRenderer's lock).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "export/family.h"
#include "export/render.h"
#include "gpuscope/snapshot.h"
#include "health/checks.h"
#include "web/api.h"

namespace gpuscope::serve {

// The renderer shared by the cycles of one set of render options. Every cycle
// is observed on the sampler thread (the lean profile's memory, see
// prom::Renderer::Observe); bodies are written on the scrape threads, one at a
// time.
class BodyRenderer {
 public:
  explicit BodyRenderer(prom::RenderOptions options) : renderer_(std::move(options)) {}

  void Observe(const Snapshot& snapshot, std::span<const prom::Family> families);
  std::shared_ptr<const std::string> Write(const Snapshot& snapshot,
                                           std::span<const prom::Family> families,
                                           prom::Format format);

 private:
  std::mutex mu_;
  prom::Renderer renderer_;
};

struct Cycle {
  explicit Cycle(std::shared_ptr<BodyRenderer> renderer) : renderer_(std::move(renderer)) {}

  SnapshotPtr snapshot;                                                  // never null
  std::shared_ptr<const health::HealthReport> health;                    // never null
  std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> diagnoses;  // never null
  // Per GPU, for /api/v1 (the KPI join's latest when the cycle was built).
  std::shared_ptr<const std::vector<web::KpiReading>> kpis;  // never null
  // Rendered after the snapshot's families, in this order: self, health,
  // diagnosis, application, then any SetFamilySource (remediation).
  std::vector<prom::Family> families;

  // The body of `format`, rendered by the first caller; shared after.
  std::shared_ptr<const std::string> Body(prom::Format format) const;
  // Its gzip encoding, compressed by the first caller; shared after. nullptr
  // when compression failed (the plain body is sent instead).
  std::shared_ptr<const std::string> Gzipped(prom::Format format) const;
  // What /api/v1 reads.
  web::View View() const { return {snapshot, health, *diagnoses, *kpis}; }

 private:
  static std::size_t Slot(prom::Format format) { return format == prom::Format::kText ? 0 : 1; }

  std::shared_ptr<BodyRenderer> renderer_;
  mutable std::array<std::once_flag, 2> rendered_, compressed_;
  mutable std::array<std::shared_ptr<const std::string>, 2> bodies_, gzipped_;
};

using CyclePtr = std::shared_ptr<const Cycle>;

}  // namespace gpuscope::serve
