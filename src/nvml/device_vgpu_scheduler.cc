// Device's read of the vGPU scheduler's log (a vGPU host board): the log is a
// ring of the last 200 time slices of every software runlist; what matters to
// the agent is, per runlist, how long it ran and how long it waited over the
// span the log covers, so this folds the entries instead of copying them.
#include <algorithm>
#include <map>
#include <memory>

#include "nvml/device_call.h"

namespace gpuscope::nvml {

Result<std::vector<VgpuRunlistLog>> Device::VgpuSchedulerLog() const {
  auto raw = std::make_unique<nvmlVgpuSchedulerLog_t>();  // 9.6 KB: off the stack
  *raw = {};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetVgpuSchedulerLog), raw.get()));
  struct Span {
    const nvmlVgpuSchedulerLogEntry_t* first = nullptr;
    const nvmlVgpuSchedulerLogEntry_t* last = nullptr;
  };
  std::map<uint32_t, Span> runlists;
  const unsigned n = std::min<unsigned>(raw->entriesCount, kNvmlVgpuSchedulerMaxLogEntries);
  for (unsigned i = 0; i < n; ++i) {
    const nvmlVgpuSchedulerLogEntry_t& e = raw->logEntries[i];
    Span& s = runlists[e.swRunlistId];
    if (!s.first || e.timestamp < s.first->timestamp) s.first = &e;
    if (!s.last || e.timestamp >= s.last->timestamp) s.last = &e;
  }
  std::vector<VgpuRunlistLog> out;
  for (const auto& [id, s] : runlists) {
    VgpuRunlistLog r;
    r.runlist = id;
    r.first_timestamp_ns = s.first->timestamp;
    r.last_timestamp_ns = s.last->timestamp;
    // Totals are cumulative: the span's difference, plus the oldest entry's own slice.
    const auto diff = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    r.run_ns = diff(s.last->timeRunTotal, s.first->timeRunTotal) + s.first->timeRun;
    r.preempted_ns = diff(s.last->cumulativePreemptionTime, s.first->cumulativePreemptionTime);
    r.target_slice_ns = s.last->targetTimeSlice;
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuscope::nvml
