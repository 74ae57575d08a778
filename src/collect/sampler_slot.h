// Internal to the sampler: what it keeps per watched device between cycles.
// Guarded by Sampler::cycle_mu_.
#pragma once

#include <chrono>
#include <memory>

#include "collect/gpu_worker.h"
#include "collect/integrals.h"
#include "collect/sampler.h"

namespace gpuscope::collect {

struct Sampler::Slot {
  Slot(const GpuInfo& gpu, std::unique_ptr<GpuWorker> w, double window_span)
      : info(gpu), worker(std::move(w)), integrator(window_span) {}

  GpuInfo info;
  std::unique_ptr<GpuWorker> worker;
  GpuSample sample;  // what the next snapshot publishes
  Integrator integrator;
  bool probed = false;  // the first (all-tier) read has been applied
  bool lost = false;
  double retry_at = 0;                              // next re-acquire attempt while lost
  double retry_backoff = 0;                         // seconds until the attempt after that
  std::chrono::steady_clock::time_point posted_at;  // when the read in progress started
  bool posted = false;                              // a read was posted this cycle
};

}  // namespace gpuscope::collect
