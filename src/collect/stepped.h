// Stepped sampling: runs a sampler over a stretch of simulated time without
// waiting for it. Each step sets the simulator's scenario clock
// (nvml::Library::sim(), its gpuscopeSimSetTime) and the sampler's clock to
// the same second and runs one cycle, so five scenario minutes at 1 s steps
// take well under a second. `gpuscope diagnose` on the simulator and the
// diagnosis ground-truth tests use it; the scenario is whatever
// GPUSCOPE_SIM_SCENARIO names when the library opens (the caller sets it).
//
// Thread safety: one run at a time per process (the simulator's clock is
// process-wide).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "collect/sampler.h"
#include "collect/selection.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::collect {

struct SteppedOptions {
  std::string nvml_path;     // the simulator's libnvidia-ml.so.1
  double start_seconds = 0;  // first scenario second sampled
  double end_seconds = 300;  // last scenario second sampled
  double step_seconds = 1;   // one sampler cycle per step (the fast interval)
  // The trailing window kept; 0: the whole run (long runs that only stream
  // each step's snapshot keep a short one).
  double window_span_s = 0;
  DeviceSelection devices;  // default: every GPU (the simulator advances only those read)
  // Called with each step's snapshot (a generator streaming history).
  std::function<void(const SnapshotPtr&)> on_step;
  // Called with each step's snapshot and the window so far (the detection
  // latency test diagnoses at every step).
  std::function<void(const SnapshotPtr&, const Window&)> on_step_window;
};

struct SteppedRun {
  std::unique_ptr<Sampler> sampler;  // owns the Window and the library
  SnapshotPtr snapshot;              // the last cycle's
};

// Samples [start, end] in steps. kNotSupported when the library has no
// simulator clock (not the simulator); the sampler's open error otherwise.
Result<SteppedRun> SampleSteps(const SteppedOptions& options);

}  // namespace gpuscope::collect
