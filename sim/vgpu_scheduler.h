// The vGPU scheduler of a host board (sim/vgpu_scheduler.cc): what share of
// the board each instance gets, and its log of time slices.
#pragma once

#include <vector>

#include "scenario.h"

namespace gpuscope::sim {

// The share of the board's time the scheduler gives each instance: best
// effort scales the demands down when they add up to more than the board;
// equal share caps each at 1/n; fixed share at its framebuffer's share.
std::vector<double> VgpuGranted(const VgpuHostSpec& host);

}  // namespace gpuscope::sim
