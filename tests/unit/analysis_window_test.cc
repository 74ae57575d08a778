// The diagnosis over the tiered window (include/gpuscope/window.h): shares,
// means and counter rates stay time-weighted across recent points and
// buckets, and the findings at 100 ms through the window equal those over
// full-resolution 1 s points.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/diagnosis.h"
#include "analysis/signals.h"
#include "analysis/window_stats.h"
#include "analysis_test_util.h"

namespace gpuscope::analysis {
namespace {

using enum Metric;
using test_util::FakeGpu;
using test_util::Fill;
using test_util::Level;
using test_util::MakeGpu;

// 600 s at 100 ms through a default window; util(t) in percent, energy
// growing 7 units per second.
std::vector<WindowPoint> Sampled(const std::function<double(double)>& util) {
  Window window(Window::Options{600, 0.1});
  for (int i = 0; i <= 6000; ++i) {
    WindowPoint p;
    p.t = 1000 + i * 0.1;
    p.values[Index(kGpuUtil)] = static_cast<float>(util(i * 0.1));
    p.values[Index(kEnergyConsumption)] = static_cast<float>(7 * i * 0.1);
    p.present.set(Index(kGpuUtil)).set(Index(kEnergyConsumption));
    window.Append(0, p);
  }
  return window.Points(0);
}

TEST(WindowTiersAnalysis, SharesAndMeansAreTimeWeightedAcrossTiers) {
  // Idle for the first 400 s (all in 10 s buckets), busy for the last 200 s
  // (buckets, 1 s buckets and recent points): counting points would give the
  // busy part most of the weight.
  std::vector<WindowPoint> points = Sampled([](double t) { return t < 400 ? 0 : 100; });
  ASSERT_LT(points.size(), 260u);
  Series util = Extract(points, kGpuUtil, 0.01);
  EXPECT_NEAR(ShareWhere(util, Below(kIdleUtil)), 400.0 / 600, 0.005);
  Summary s = Summarize(util);
  EXPECT_NEAR(s.mean, 200.0 / 600, 0.005);
  EXPECT_NEAR(s.stddev, std::sqrt(2.0 / 9), 0.005);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 1);
  EXPECT_NEAR(TrailingRunSeconds(util, AtLeast(kBusyUtil)), 200, 0.5);
  EXPECT_NEAR(*CounterRate(points, kEnergyConsumption), 7, 1e-3);
}

TEST(WindowTiersAnalysis, TwoLevelSignalInsideBucketsKeepsItsShareAndRuns) {
  // 3 s gaps every 10 s, out of phase with the buckets: inside each 10 s
  // bucket the signal is two-level, so its share below the gap threshold and
  // its spread are kept.
  std::vector<WindowPoint> points =
      Sampled([](double t) { return std::fmod(t + 4, 10) < 3 ? 2 : 96; });
  Series util = Extract(points, kGpuUtil, 0.01);
  EXPECT_NEAR(ShareWhere(util, Below(kGapUtil)), 0.3, 0.01);
  EXPECT_NEAR(ShareWhere(util, AtLeast(kBusyUtil)), 0.7, 0.01);
  Summary s = Summarize(util);
  EXPECT_NEAR(s.mean, 0.3 * 0.02 + 0.7 * 0.96, 0.01);
  EXPECT_NEAR(s.stddev, 0.94 * std::sqrt(0.3 * 0.7), 0.01);
  // The last minute (recent points and 1 s buckets) counts its 6 gaps
  // exactly; older, each 20 s bucket holding gaps counts at least one.
  const double last = util.t.back();
  EXPECT_EQ(CountRuns(Since(util, last - 59.95), Below(kGapUtil)), 6);
  EXPECT_NEAR(CountRuns(util, Below(kGapUtil)), 6 + 540 / 20, 2);
}

// The same 1 s history at 100 ms (ten equal samples a second) through the
// default window.
std::vector<WindowPoint> ThroughWindow(const std::vector<WindowPoint>& seconds) {
  Window window(Window::Options{600, 0.1});
  for (const WindowPoint& s : seconds) {
    for (int k = 0; k < 10; ++k) {
      WindowPoint p = s;
      p.t = s.t + k * 0.1;
      window.Append(0, p);
    }
  }
  return window.Points(0);
}

std::vector<FindingKind> KindsOf(const FakeGpu& g, const std::vector<WindowPoint>& points) {
  std::vector<FindingKind> out;
  for (const Finding& f : Diagnose(g.info, points, g.latest, {})) out.push_back(f.kind);
  return out;
}

TEST(WindowTiersAnalysis, FindingsThroughTheWindowEqualFullResolution) {
  const std::vector<std::function<void(int, Level&)>> patterns = {
      [](int i, Level& l) { l.util = 97 + (i % 3), l.sm = 84 + (i % 2); },  // compute bound
      [](int i, Level& l) {  // thermal throttle, clock falling
        if (i >= 100) l.reasons = 0x60, l.temp = 89, l.clock = 1980 - (i - 100) * 1.5;
      },
      [](int i, Level& l) { l.reasons = i % 10 == 0 ? 0x4 : 0; },    // brief power cap: none
      [](int i, Level& l) { l.reasons = i % 10 < 6 ? 0x84 : 0x4; },  // power brake 60%
      [](int i, Level& l) {                                          // starved
        if (i % 12 >= 6) l.util = 3, l.sm = 2, l.pcie_rx = 2e8;
      },
      [](int, Level& l) { l.dram = 90, l.sm = 45; },               // memory bandwidth
      [](int i, Level& l) { l.used_gib = 30 + i * 40.0 / 1024; },  // memory growth
      [](int i, Level& l) { l.util = i < 20 ? 98 : 0, l.sm = i < 20 ? 85 : 0; },  // idle
  };
  for (std::size_t n = 0; n < patterns.size(); ++n) {
    FakeGpu g = MakeGpu(true);
    Fill(g, 300, patterns[n]);
    const std::vector<FindingKind> full = KindsOf(g, g.points);
    EXPECT_FALSE(full.empty() && n != 2) << "pattern " << n;  // a brief cap is normal
    std::vector<WindowPoint> tiered = ThroughWindow(g.points);
    EXPECT_LT(tiered.size(), 250u);
    EXPECT_EQ(KindsOf(g, tiered), full) << "pattern " << n;
  }
}

}  // namespace
}  // namespace gpuscope::analysis
