// Workload evaluation: the activity a GPU's scenario timeline asks for at one
// integration step, with deterministic noise from a hash of (seed, gpu, step).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "scenario.h"

namespace gpuscope::sim {

// Activity over one step. Fractions 0..1; traffic in bytes/s.
struct Activity {
  double util = 0, sm = 0, occupancy = 0, tensor = 0, dram = 0;
  double fp64 = 0, fp32 = 0, fp16 = 0;
  double pcie_tx = 0, pcie_rx = 0, nvlink_tx = 0, nvlink_rx = 0;
  double memory_gib = -1;  // segment's memory_used_gib, -1 when unset
  double power_boost = 1;  // factor on power demand above idle (a burst)
};

// A uniform value in [0, 1) from (seed, gpu, step, channel): no RNG state, so
// any step can be recomputed alone.
double Noise01(uint64_t seed, unsigned gpu, int64_t step, unsigned channel);

// The activity of a timeline at time t (seconds) for integration step `step`.
Activity EvaluateWorkload(const std::vector<Segment>& timeline, double t, uint64_t seed,
                          unsigned gpu, int64_t step);

// How hard the activity drives the board's power, 0..1.
double PowerActivity(const Activity& a);

}  // namespace gpuscope::sim
