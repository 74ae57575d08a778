#include "collect/vgpu_window.h"

#include <algorithm>

namespace gpuscope::collect {

std::vector<std::pair<uint32_t, WindowPoint>> VgpuPoints(double t, const GpuSample& board) {
  const double wait = board.Find(Metric::kVgpuSchedulerWait).value_or(0);
  const double scheduled = std::clamp(1 - wait, 0.01, 1.0);
  std::vector<std::pair<uint32_t, WindowPoint>> out;
  for (const VgpuInstance& v : board.vgpus) {
    WindowPoint p;
    p.t = t;
    const auto set = [&p](Metric m, double value) {
      p.values[Index(m)] = static_cast<float>(value);
      p.present.set(Index(m));
    };
    if (v.sm_utilization) set(Metric::kGpuUtil, 100 * std::min(1.0, *v.sm_utilization / scheduled));
    if (v.fb_used_bytes) set(Metric::kMemoryUsed, static_cast<double>(*v.fb_used_bytes));
    if (v.fb_total_bytes) set(Metric::kMemoryTotal, static_cast<double>(*v.fb_total_bytes));
    out.emplace_back(v.id, std::move(p));
  }
  return out;
}

}  // namespace gpuscope::collect
