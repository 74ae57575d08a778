// Each process's share of a GPU's SM time from NVML's per-process
// utilization samples (nvmlDeviceGetProcessUtilization), the measure behind
// gpuscope_gpu_holder_sm_share (docs/attribution.md).
//
// NVML answers the samples it took since a timestamp: per sampling period, one
// sample per process that ran in it (smUtil: the percent of the period it had
// a kernel on the SMs; the processes of one period add up to the GPU's
// utilization.gpu). A process absent from a period did not run in it. So a
// process's share over the answer is the sum of its smUtil over the number of
// periods the answer covers, and the shares add up to the GPU's busy share.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "nvml/device.h"

namespace gpuscope::collect {

// pid -> share in [0, 1] over `samples` (one answer). A (pid, timestamp) the
// answer repeats counts once. The periods are the distinct timestamps, or more
// where the spacing of those says whole periods between them had no sample
// (nobody ran): (newest - oldest) / the median spacing + 1. A pid of the
// answer that has exited by now is still in the map: the caller decides.
std::map<uint32_t, double> ProcessSmShares(std::span<const nvml::ProcessUtilizationSample> samples);

}  // namespace gpuscope::collect
