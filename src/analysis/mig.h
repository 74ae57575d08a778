// MIG instances share their GPU's die: one SM clock, one temperature, one
// power budget. NVML answers those for the parent only, so an instance's
// window holds its own activity and memory but not what slows it. For the
// diagnosis an instance's points carry the parent's clock, temperature and
// power readings (kParentMetrics) wherever the instance ran kernels: a busy
// instance of a GPU at its thermal slowdown or power cap is slowed by it and
// gets the parent's finding, an instance that runs nothing is not slowed.
// Rules whose inputs are all parent metrics (InheritedFromParent) name their
// evidence as the parent's ("parent_thermal_reason_share").
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "analysis/rules_table.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis {

// What a MIG instance reads from its parent GPU.
inline constexpr Metric kParentMetrics[] = {Metric::kSmClock,
                                            Metric::kMaxSmClock,
                                            Metric::kClockReasons,
                                            Metric::kThrottleSwThermal,
                                            Metric::kThrottleHwThermal,
                                            Metric::kThrottleSwPowerCap,
                                            Metric::kThrottleHwPowerBrake,
                                            Metric::kGpuTemp,
                                            Metric::kSlowdownTemp,
                                            Metric::kPowerUsage,
                                            Metric::kPowerLimit};

constexpr bool IsParentMetric(Metric m) {
  for (Metric p : kParentMetrics) {
    if (p == m) return true;
  }
  return false;
}

// Whether a MIG instance inherits this rule from its parent: every input it
// rests on is one the instance reads from the parent (thermal throttling,
// power cap).
constexpr bool InheritedFromParent(const Rule& rule) {
  if (rule.inputs.empty()) return false;
  for (Metric m : rule.inputs) {
    if (!IsParentMetric(m)) return false;
  }
  return true;
}

// The slot of the whole GPU a MIG instance belongs to (same UUID, not an
// instance), or nullopt (not an instance, or its parent is not in `gpus`).
std::optional<std::size_t> ParentSlot(const std::vector<GpuInfo>& gpus, const GpuInfo& instance);

// The instance's points, each carrying the parent's kParentMetrics from the
// parent point at the same time (within half a point's span) where the
// instance ran kernels (activity >= 5%) and lacks them itself.
std::vector<WindowPoint> WithParentMetrics(std::span<const WindowPoint> instance,
                                           std::span<const WindowPoint> parent);

}  // namespace gpuscope::analysis
