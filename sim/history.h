// What a board's past leaves in its counters: the driver loaded
// `driver_uptime_s` before scenario time 0, so counters that run since the
// driver loaded (energy, violation times, PCIe replays, NVLink traffic and
// errors) and the lifetime ECC aggregates start from that history, not from
// zero, as a real client sees them at its first call. Also the fixed,
// uneven share of NVLink traffic each link carries.
//
// Thread safety: pure functions.
#pragma once

#include "physics.h"

namespace gpuscope::sim {

// Adds the history before t = 0 to the counters of the initial state s.
void ApplyDriverHistory(const PhysicsInput& in, GpuState& s);

// Relative weight (0.6..1.4) of link l in the GPU's NVLink traffic.
double LinkWeight(const PhysicsInput& in, unsigned link);

}  // namespace gpuscope::sim
