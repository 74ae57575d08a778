#include "analysis/diagnosis.h"

#include <algorithm>

#include "analysis/rules.h"
#include "analysis/signals.h"

namespace gpuscope::analysis {
namespace {

constexpr std::array<std::string_view, kFindingKindCount> kKindNames = {
    "compute_bound",      "memory_capacity", "memory_bandwidth", "thermal_throttle", "power_cap",
    "interconnect_bound", "pcie_degraded",   "starved",          "idle_held",        "idle"};

using Detector = std::optional<Finding> (*)(const Signals&, const DiagnoseOptions&);

// Limits that stop a busy GPU from being "healthy compute-bound".
constexpr FindingKind kLimits[] = {FindingKind::kThermalThrottle, FindingKind::kPowerCap,
                                   FindingKind::kInterconnect, FindingKind::kStarved,
                                   FindingKind::kMemoryBandwidth};

void Add(std::vector<Finding>& out, std::optional<Finding> f) {
  if (f) out.push_back(std::move(*f));
}

bool Enough(const std::vector<WindowPoint>& used, const DiagnoseOptions& options) {
  return used.size() >= 2 && used.back().t - used.front().t >= options.min_span_seconds;
}

}  // namespace

std::string_view KindName(FindingKind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }

std::optional<FindingKind> KindFromName(std::string_view name) {
  for (FindingKind k : kAllFindingKinds) {
    if (KindName(k) == name) return k;
  }
  return std::nullopt;
}

const Finding* FindKind(const std::vector<Finding>& findings, FindingKind kind) {
  for (const Finding& f : findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

Judgement JudgeTrailing(const GpuInfo& info, const std::vector<WindowPoint>& used,
                        const GpuSample& latest, const DiagnoseOptions& options) {
  if (!Enough(used, options)) return {};
  Signals s = ComputeSignals(info, used, latest, options);
  std::vector<Finding> out;
  if (std::optional<Finding> idle = DetectIdle(s, options)) {
    // An idle GPU has no bottleneck; only a degraded link is still worth saying.
    out.push_back(std::move(*idle));
    Add(out, DetectPcieDegraded(s, options));
  } else {
    // Limits that set in fast are judged over the window, else over its
    // recent part, so one that began a minute ago is not diluted by the
    // minutes before it.
    std::optional<RecentSignals> recent = ComputeRecentSignals(info, used, latest, options);
    for (Detector d : {DetectMemoryCapacity, DetectThermal, DetectPowerCap, DetectInterconnect,
                       DetectPcieDegraded}) {
      std::optional<Finding> f = d(s, options);
      if (!f && recent) f = d(recent->signals, recent->options);
      Add(out, std::move(f));
    }
    for (Detector d : {DetectStarved, DetectMemoryBandwidth}) Add(out, d(s, options));
    bool limited = std::any_of(std::begin(kLimits), std::end(kLimits),
                               [&](FindingKind k) { return FindKind(out, k) != nullptr; });
    if (!limited) Add(out, DetectComputeBound(s, options));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) { return a.confidence > b.confidence; });
  Judgement j{std::move(out), {}};
  if (j.findings.empty()) j.activity = DescribeLoad(s, options);
  return j;
}

std::vector<Finding> Diagnose(const GpuInfo& info, const std::vector<WindowPoint>& points,
                              const GpuSample& latest, const DiagnoseOptions& options) {
  return JudgeTrailing(info, TrailingPoints(points, options.window_seconds), latest, options)
      .findings;
}

}  // namespace gpuscope::analysis
