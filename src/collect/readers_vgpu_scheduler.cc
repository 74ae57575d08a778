// The vGPU scheduler of a host board, in the slow tier: two calls per slow
// cycle on a host board (state and log), none on any other board.
#include "collect/readers.h"

namespace gpuscope::collect {

using enum Metric;

void ReadVgpuScheduler(ReadContext& ctx) {
  if (!ctx.Due(kVgpuSchedulerPolicy) || !ctx.Has(kVirtualizationMode) ||
      ctx.reading().sample.Get(kVirtualizationMode) != nvml::kVirtualizationHostOfVgpus) {
    return;
  }
  const nvml::Device& d = ctx.device();
  if (auto state = ctx.Try<nvml::VgpuSchedulerState>("nvmlDeviceGetVgpuSchedulerState",
                                                     [&] { return d.VgpuScheduler(); })) {
    ctx.reading().sample.vgpu_scheduler_policy = state->policy;
    ctx.Set(kVgpuSchedulerPolicy, state->policy);
    ctx.Set(kVgpuSchedulerTimeslice, state->timeslice_ns / 1e9);
  }
  if (ctx.lost()) return;
  auto log = ctx.Try<std::vector<nvml::VgpuRunlistLog>>("nvmlDeviceGetVgpuSchedulerLog",
                                                        [&] { return d.VgpuSchedulerLog(); });
  if (!log) return;
  // Each runlist's share of its working time (run + preempted) spent waiting.
  double wait = 0;
  unsigned counted = 0;
  for (const nvml::VgpuRunlistLog& r : *log) {
    const double working = static_cast<double>(r.run_ns + r.preempted_ns);
    if (working <= 0) continue;
    wait += static_cast<double>(r.preempted_ns) / working;
    ++counted;
  }
  ctx.Set(kVgpuSchedulerRunlists, static_cast<double>(log->size()));
  ctx.Set(kVgpuSchedulerWait, counted > 0 ? wait / counted : 0);
}

}  // namespace gpuscope::collect
