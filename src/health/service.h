// Glue for the two ways health runs:
//
// - `gpuscope health` (one shot): RunOnce opens NVML through a collect::Sampler,
//   starts the event thread, samples every GPU (all tiers), optionally watches
//   for watch_seconds and samples again (rates such as PCIe replays per minute
//   need two samples at least rate_min_span_seconds apart), and judges.
// - `gpuscope serve`: a Service keeps the HealthState between cycles; call
//   Update from the sampler's publish callback and hand the families it
//   returns to the Renderer; Latest() serves /api or the web page.
//
// Thread safety: RunOnce is reentrant. Service methods may be called from any
// thread (one mutex).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "collect/sampler.h"
#include "export/family.h"
#include "gpuscope/status.h"
#include "health/checks.h"
#include "health/events.h"
#include "health/families.h"

namespace gpuscope::health {

struct RunOptions {
  collect::SamplerOptions sampler;  // nvml_path, device selection, ...
  double watch_seconds = 0;         // 0: one sample; else sample again after this long
  HealthOptions health;
};

// Always returns a report: without NVML it has nvml_up = false and verdict
// kFail (ExitCode gives 2).
HealthReport RunOnce(const RunOptions& options);

class Service {
 public:
  explicit Service(HealthOptions health = {}, FamilyOptions families = {});

  // Judges a published snapshot with the event state and returns the extra
  // families for the Renderer.
  std::vector<prom::Family> Update(const Snapshot& snapshot, const EventState& events, double now);
  HealthReport Latest() const;

 private:
  HealthOptions health_;
  FamilyOptions families_;
  mutable std::mutex mu_;
  HealthState state_;
  HealthReport latest_;
};

}  // namespace gpuscope::health
