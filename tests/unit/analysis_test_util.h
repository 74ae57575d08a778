// Synthetic windows for the analysis unit tests: a GPU model and a per-second
// function filling each point.
#pragma once

#include <functional>
#include <vector>

#include "analysis/diagnosis.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis::test_util {

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

struct FakeGpu {
  GpuInfo info;
  GpuSample latest;
  std::vector<WindowPoint> points;
};

// H100-like (GPM) or A100-like (no GPM) identity and static values.
inline FakeGpu MakeGpu(bool hopper) {
  FakeGpu g;
  g.info.name = hopper ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB";
  g.info.uuid = "GPU-00000000-0000-0000-0000-000000000001";
  g.info.architecture = hopper ? "Hopper" : "Ampere";
  g.info.gpm_supported = hopper;
  g.info.nvlink_count = hopper ? 18 : 12;
  GpuSample& s = g.latest;
  s.Set(Metric::kMemoryTotal, (hopper ? 81559.0 : 81920.0) * 1048576);
  s.Set(Metric::kPowerLimit, hopper ? 700 : 400);
  s.Set(Metric::kMaxSmClock, hopper ? 1980 : 1410);
  s.Set(Metric::kSlowdownTemp, 89);
  s.Set(Metric::kPcieLinkGen, hopper ? 5 : 4);
  s.Set(Metric::kPcieLinkGenMax, hopper ? 5 : 4);
  s.Set(Metric::kPcieLinkWidth, 16);
  s.Set(Metric::kPcieLinkWidthMax, 16);
  return g;
}

// The fields a busy, healthy GPU reports at one second.
struct Level {
  double util = 98, sm = 85, dram = 55;  // percent
  double used_gib = 40, capacity_gib = 79;
  double power = 600, clock = 1980, temp = 62;
  double pcie_rx = 3e9, pcie_tx = 1.5e9;  // B/s
  double reasons = 0;
};

// Fills `seconds` points, one per second from t0; `at(i, level)` adjusts the
// level of second i. GPM fields only when the GPU has GPM.
inline void Fill(FakeGpu& g, int seconds, const std::function<void(int, Level&)>& at,
                 double t0 = 1000) {
  bool gpm = g.info.gpm_supported;
  for (int i = 0; i < seconds; ++i) {
    Level l;
    if (!gpm) l.clock = 1410, l.power = 350;
    at(i, l);
    WindowPoint p;
    p.t = t0 + i;
    auto set = [&p](Metric m, double v) {
      p.values[Index(m)] = static_cast<float>(v);
      p.present.set(Index(m));
    };
    set(Metric::kGpuUtil, l.util);
    set(Metric::kMemCopyUtil, l.dram);
    if (gpm) set(Metric::kSmActive, l.sm), set(Metric::kDramActive, l.dram);
    set(Metric::kMemoryUsed, l.used_gib * kGiB);
    set(Metric::kMemoryFree, (l.capacity_gib - l.used_gib) * kGiB);
    set(Metric::kPowerUsage, l.power);
    set(Metric::kSmClock, l.clock);
    set(Metric::kGpuTemp, l.temp);
    set(Metric::kPcieRxBytesRate, l.pcie_rx);
    set(Metric::kPcieTxBytesRate, l.pcie_tx);
    set(Metric::kClockReasons, l.reasons);
    g.points.push_back(p);
    g.latest.Set(Metric::kMemoryUsed, l.used_gib * kGiB);
    g.latest.Set(Metric::kMemoryFree, (l.capacity_gib - l.used_gib) * kGiB);
    g.latest.Set(Metric::kGpuUtil, l.util);
  }
}

// The findings of a synthetic GPU's whole window.
inline std::vector<Finding> DiagnoseGpu(const FakeGpu& g, DiagnoseOptions o = {}) {
  return Diagnose(g.info, g.points, g.latest, o);
}

}  // namespace gpuscope::analysis::test_util
