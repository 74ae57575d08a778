// The health step of a sampling cycle, one path for both ways health runs:
//
// - `gpuscope serve`: the Exporter (exporter.h) does the same two steps
//   apart: ApplyEvents in the sampler's decorator (before the snapshot is
//   frozen), Evaluate in the publish hook.
// - `gpuscope health` (one shot): RunHealthOnce opens NVML through a
//   collect::Sampler, starts the event thread, samples every GPU (all tiers),
//   optionally watches for watch_seconds and samples again (rates such as PCIe
//   replays per minute need two samples at least rate_min_span_seconds
//   apart), and judges with JudgeCycle.
//
// XIDs reach a snapshot only through health::ApplyEvents, which folds the
// event thread's state into it (the sampler knows nothing of events).
//
// Thread safety: JudgeCycle is reentrant but one HealthState must not be used
// by two threads at once; RunHealthOnce is reentrant.
#pragma once

#include <functional>

#include "attribution/service.h"
#include "collect/sampler.h"
#include "gpuscope/snapshot.h"
#include "health/checks.h"
#include "health/events.h"

namespace gpuscope::serve {

// Sets the event thread's XID counts on `snapshot` (xid_counts, kXidLast) and
// judges it at `now`, keeping rates in `state`.
health::HealthReport JudgeCycle(Snapshot& snapshot, const health::EventState& events,
                                health::HealthState& state, double now,
                                const health::HealthOptions& options);

struct HealthRunOptions {
  collect::SamplerOptions sampler;  // nvml_path, device selection, ...
  double watch_seconds = 0;         // 0: one sample; else sample again after this long
  // Watching until told to stop (`health --watch`): waits for the next sample
  // (false: stop) and gets each later report (false: stop). Unset: one sleep
  // of watch_seconds and one more report.
  std::function<bool()> wait_next;
  std::function<bool(const health::HealthReport&)> on_report;
  health::HealthOptions health;
  attribution::ServiceOptions attribution;  // who each GPU serves, for the report
};

// Always returns a report (the last one): without NVML it has nvml_up =
// false and verdict kFail (`gpuscope health` exits with cli::HealthExit), and
// *opened, when given, says why NVML did not open.
health::HealthReport RunHealthOnce(const HealthRunOptions& options, Status* opened = nullptr);

}  // namespace gpuscope::serve
