// Offline sampling of a simulator scenario for `gpuscope diagnose --simulate`
// and the ground-truth tests: instead of waiting minutes of wall time, step
// the simulator's scenario clock (its exported gpuscopeSimSetTime) and run one
// sampler cycle per step, with the sampler's clock reading the same scenario
// time. Five scenario minutes at 1 s steps take well under a second.
//
// Thread safety: one call at a time per process (the simulator's clock and
// GPUSCOPE_SIM_SCENARIO are process-wide).
#pragma once

#include <memory>
#include <string>

#include "collect/sampler.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::analysis {

struct OfflineOptions {
  std::string nvml_path;     // the simulator's libnvidia-ml.so.1
  std::string scenario;      // path or shipped name; empty: keep GPUSCOPE_SIM_SCENARIO
  double start_seconds = 0;  // first scenario second sampled
  double end_seconds = 300;  // last scenario second sampled
  double step_seconds = 1;   // one sampler cycle per step (the fast interval)
};

struct OfflineRun {
  std::unique_ptr<collect::Sampler> sampler;  // owns the Window and the library
  SnapshotPtr snapshot;                       // the last cycle's
};

// Samples [start, end] in steps. kNotSupported when the library does not
// export gpuscopeSimSetTime (not the simulator); the sampler's open error
// otherwise.
Result<OfflineRun> SampleScenario(const OfflineOptions& options);

}  // namespace gpuscope::analysis
