// The vGPU scheduler of a time-sliced host board: the share each instance
// gets (VgpuGranted), and the scheduler's entry points. Its log is derived
// from the instances' workloads: the busy instances take turns, each running
// its granted share of every round and waiting (preempted) for the demand it
// was not given, so three busy instances under best effort each run a third
// and wait two thirds, and one busy instance alone never waits.
#include "vgpu_scheduler.h"

#include <algorithm>
#include <cmath>

#include "exports_common.h"

namespace gpuscope::sim {

std::vector<double> VgpuGranted(const VgpuHostSpec& host) {
  std::vector<double> out;
  double demand = 0, fb = 0;
  for (const VgpuInstanceSpec& v : host.instances) demand += v.util, fb += v.fb_bytes;
  const double n = static_cast<double>(host.instances.size());
  for (const VgpuInstanceSpec& v : host.instances) {
    switch (host.scheduler) {
      case VgpuScheduler::kBestEffort:
        out.push_back(demand > 1 ? v.util / demand : v.util);
        break;
      case VgpuScheduler::kEqualShare:
        out.push_back(std::min(v.util, 1 / n));
        break;
      case VgpuScheduler::kFixedShare:
        out.push_back(std::min(v.util, fb > 0 ? v.fb_bytes / fb : 0));
        break;
    }
  }
  return out;
}

}  // namespace gpuscope::sim

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

namespace abi = gpuscope::nvml;

// Runlist ids of the sim: the instance's slot plus one.
constexpr unsigned kRunlistBase = 1;
constexpr unsigned long long kNsPerUs = 1000;

// The scenario's bounds on the time slice, microseconds (sim/scenario_vgpu.cc).
constexpr unsigned kMinTimesliceUs = 100, kMaxTimesliceUs = 1000000;

}  // namespace

// The last slices of the busy instances, oldest first. A round gives each
// busy instance one turn of its granted share of k slices (k busy instances);
// its cumulative times grow with scenario time.
SIM_EXPORT nvmlReturn_t nvmlDeviceGetVgpuSchedulerLog(nvmlDevice_t d, nvmlVgpuSchedulerLog_t* log) {
  SIM_DEVICE_CALL(nvmlDeviceGetVgpuSchedulerLog, d);
  if (!log) return rc::kInvalidArgument;
  if (!c.spec().vgpu_host) return rc::kNotSupported;
  const VgpuHostSpec& host = *c.spec().vgpu_host;
  const unsigned engine = log->engineId;
  *log = {};
  log->engineId = engine;
  log->schedulerPolicy = static_cast<unsigned>(host.scheduler);
  log->arrMode = 1;  // adaptive round-robin disabled
  log->schedulerParams.vgpuSchedData.timeslice =
      static_cast<unsigned>(host.timeslice_us * kNsPerUs);  // ns
  const std::vector<double> granted = VgpuGranted(host);
  std::vector<unsigned> busy;
  for (unsigned i = 0; i < host.instances.size(); ++i) {
    if (granted[i] > 0) busy.push_back(i);
  }
  if (busy.empty()) return rc::kSuccess;
  const double slice_ns = static_cast<double>(host.timeslice_us * kNsPerUs);
  const double round_ns = slice_ns * static_cast<double>(busy.size());
  const double now_ns = c.now * 1e9;
  const auto rounds = static_cast<unsigned>(
      std::min<double>(kNvmlVgpuSchedulerMaxLogEntries / busy.size(), now_ns / round_ns));
  const unsigned long long epoch_ns = c.sim->epoch_us() * kNsPerUs;
  for (unsigned r = rounds; r-- > 0;) {
    double at = now_ns - r * round_ns - round_ns;  // the round's start
    for (unsigned slot : busy) {
      const VgpuInstanceSpec& v = host.instances[slot];
      const double run = granted[slot] * round_ns;
      at += run;
      nvmlVgpuSchedulerLogEntry_t& e = log->logEntries[log->entriesCount++];
      e.timestamp = epoch_ns + static_cast<unsigned long long>(at);
      e.timeRun = static_cast<unsigned long long>(run);
      e.timeRunTotal = static_cast<unsigned long long>(granted[slot] * at);
      e.swRunlistId = kRunlistBase + slot;
      e.targetTimeSlice = static_cast<unsigned long long>(slice_ns);
      e.cumulativePreemptionTime =
          static_cast<unsigned long long>(std::max(0.0, v.util - granted[slot]) * at);
    }
  }
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t
nvmlDeviceGetVgpuSchedulerCapabilities(nvmlDevice_t d, nvmlVgpuSchedulerCapabilities_t* caps) {
  SIM_DEVICE_CALL(nvmlDeviceGetVgpuSchedulerCapabilities, d);
  if (!caps) return rc::kInvalidArgument;
  if (!c.spec().vgpu_host) return rc::kNotSupported;
  *caps = {};
  caps->supportedSchedulers[0] = abi::kVgpuSchedulerBestEffort;
  caps->supportedSchedulers[1] = abi::kVgpuSchedulerEqualShare;
  caps->supportedSchedulers[2] = abi::kVgpuSchedulerFixedShare;
  caps->minTimeslice = kMinTimesliceUs;
  caps->maxTimeslice = kMaxTimesliceUs;
  caps->isArrModeSupported = 0;
  return rc::kSuccess;
}
