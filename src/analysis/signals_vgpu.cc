#include "analysis/signals.h"

namespace gpuscope::analysis {
namespace {

std::optional<Summary> SummaryOf(std::span<const WindowPoint> points, Metric m) {
  Series s = Extract(points, m);
  if (s.empty()) return std::nullopt;
  return Summarize(s);
}

// The latest sample's value, else the newest point's.
std::optional<double> LastOf(std::span<const WindowPoint> points, const GpuSample& latest,
                             Metric m) {
  if (latest.Has(m)) return latest.Get(m);
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->Has(m)) return it->Get(m);
  }
  return std::nullopt;
}

}  // namespace

void VgpuSchedulerSignals(std::span<const WindowPoint> points, const GpuSample& latest,
                          Signals& s) {
  s.vgpu_wait = SummaryOf(points, Metric::kVgpuSchedulerWait);
  s.vgpu_runlists = SummaryOf(points, Metric::kVgpuSchedulerRunlists);
  s.vgpu_policy = LastOf(points, latest, Metric::kVgpuSchedulerPolicy);
  s.vgpu_timeslice_s = LastOf(points, latest, Metric::kVgpuSchedulerTimeslice);
  s.vgpu_host = latest.HostsVgpus();
}

}  // namespace gpuscope::analysis
