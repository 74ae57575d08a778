#include "analysis/mig.h"

#include <algorithm>
#include <cmath>

#include "analysis/signals.h"

namespace gpuscope::analysis {
namespace {

// Points closer than this (or half their span) are the same sampling cycle:
// the GPU workers of one cycle read their devices a few milliseconds apart.
constexpr double kSameCycleSeconds = 0.25;

// An instance reads no utilization of its own (NVML has it per GPU only):
// its GPM graphics-engine activity says whether it ran kernels.
bool Ran(const WindowPoint& p) {
  const Metric m = p.Has(Metric::kGpuUtil) ? Metric::kGpuUtil : Metric::kGrEngineActive;
  return p.Has(m) && p.Get(m) / 100 >= kIdleUtil;
}

const WindowPoint* SameCycle(std::span<const WindowPoint> parent, const WindowPoint& p) {
  auto it = std::lower_bound(parent.begin(), parent.end(), p.t,
                             [](const WindowPoint& q, double t) { return q.t < t; });
  const WindowPoint* best = nullptr;
  for (auto c : {it, it == parent.begin() ? it : it - 1}) {
    if (c == parent.end()) continue;
    if (!best || std::fabs(c->t - p.t) < std::fabs(best->t - p.t)) best = &*c;
  }
  const double tolerance = std::max(kSameCycleSeconds, 0.5 * p.seconds);
  return best && std::fabs(best->t - p.t) <= tolerance ? best : nullptr;
}

void Inherit(const WindowPoint& from, WindowPoint& to) {
  for (Metric m : kParentMetrics) {
    if (to.Has(m) || !from.Has(m)) continue;
    const std::size_t i = Index(m);
    to.values[i] = from.values[i];
    to.present.set(i);
    for (const Spread& s : from.spreads) {
      if (s.metric == i) to.spreads.push_back(s);
    }
    for (const BitShare& b : from.bit_shares) {
      if (b.metric == i) to.bit_shares.push_back(b);
    }
  }
  // WindowPoint looks spreads up by metric (sorted).
  std::sort(to.spreads.begin(), to.spreads.end(),
            [](const Spread& a, const Spread& b) { return a.metric < b.metric; });
}

}  // namespace

std::optional<std::size_t> ParentSlot(const std::vector<GpuInfo>& gpus, const GpuInfo& instance) {
  if (!instance.is_mig()) return std::nullopt;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!gpus[i].is_mig() && gpus[i].uuid == instance.uuid) return i;
  }
  return std::nullopt;
}

std::vector<WindowPoint> WithParentMetrics(std::span<const WindowPoint> instance,
                                           std::span<const WindowPoint> parent) {
  std::vector<WindowPoint> out(instance.begin(), instance.end());
  for (WindowPoint& p : out) {
    if (!Ran(p)) continue;
    if (const WindowPoint* q = SameCycle(parent, p)) Inherit(*q, p);
  }
  return out;
}

}  // namespace gpuscope::analysis
