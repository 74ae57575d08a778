#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis.h"
#include "analysis_test_util.h"

namespace gpuscope::analysis {
namespace {

using test_util::DiagnoseGpu;
using test_util::FakeGpu;
using test_util::Fill;
using test_util::kGiB;
using test_util::Level;
using test_util::MakeGpu;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

std::vector<FindingKind> Kinds(const std::vector<Finding>& findings) {
  std::vector<FindingKind> out;
  for (const Finding& f : findings) out.push_back(f.kind);
  return out;
}

const Evidence* FindEvidence(const Finding& f, const std::string& signal) {
  for (const Evidence& e : f.evidence) {
    if (e.signal == signal) return &e;
  }
  return nullptr;
}

TEST(Diagnose, HealthyTrainingIsComputeBoundOnly) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) { l.util = 97 + (i % 3), l.sm = 84 + (i % 2); });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kComputeBound));
  EXPECT_FALSE(f[0].fallback);
  EXPECT_GT(f[0].confidence, 0.8);
  EXPECT_LE(f[0].confidence, 1.0);
  const Evidence* sm = FindEvidence(f[0], "sm_active_mean");
  ASSERT_NE(sm, nullptr);
  EXPECT_NEAR(sm->value, 0.845, 0.01);
  EXPECT_DOUBLE_EQ(sm->threshold, 0.65);
  EXPECT_TRUE(sm->met);
  EXPECT_THAT(f[0].verdict, ::testing::ContainsRegex("SM active 8[45]%"));
}

TEST(Diagnose, FallbackWithoutGpmHasLowerConfidence) {
  FakeGpu hopper = MakeGpu(true), ampere = MakeGpu(false);
  Fill(hopper, 300, [](int, Level&) {});
  Fill(ampere, 300, [](int, Level&) {});
  std::vector<Finding> h = DiagnoseGpu(hopper), a = DiagnoseGpu(ampere);
  ASSERT_THAT(Kinds(a), ElementsAre(FindingKind::kComputeBound));
  EXPECT_TRUE(a[0].fallback);
  EXPECT_THAT(a[0].signals, ::testing::Contains("sm_clock"));
  EXPECT_LT(a[0].confidence, h[0].confidence);
}

TEST(Diagnose, FallbackRejectsLowClockOrPower) {
  FakeGpu g = MakeGpu(false);
  Fill(g, 300, [](int, Level& l) { l.power = 120; });  // one tiny kernel always in flight
  EXPECT_THAT(Kinds(DiagnoseGpu(g)), ::testing::IsEmpty());
}

TEST(Diagnose, MemoryGrowthPredictsOom) {
  FakeGpu g = MakeGpu(true);
  // 30 GiB + 40 MiB/s: at t=299 used = 30 + 11.68 GiB, 37.3 GiB left of 79.
  Fill(g, 300, [](int i, Level& l) { l.used_gib = 30 + i * 40.0 / 1024; });
  std::vector<Finding> f = DiagnoseGpu(g);
  const Finding* mem = FindKind(f, FindingKind::kMemoryCapacity);
  ASSERT_NE(mem, nullptr);
  ASSERT_TRUE(mem->oom_eta_seconds.has_value());
  double left = (79 - (30 + 299 * 40.0 / 1024)) * 1024 / 40;  // seconds
  EXPECT_NEAR(*mem->oom_eta_seconds, left, left * 0.02);
  EXPECT_THAT(mem->verdict, ::testing::HasSubstr("out of memory in ~"));
  // A healthy job that also fills memory stays compute-bound.
  EXPECT_NE(FindKind(f, FindingKind::kComputeBound), nullptr);
}

TEST(Diagnose, SteadyMemoryBelowNinetyPercentIsNoFinding) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int, Level& l) { l.used_gib = 70; });  // 89%
  std::vector<Finding> f = DiagnoseGpu(g);
  EXPECT_EQ(FindKind(f, FindingKind::kMemoryCapacity), nullptr);
  FakeGpu full = MakeGpu(true);
  Fill(full, 300, [](int, Level& l) { l.used_gib = 76; });  // 96%
  std::vector<Finding> ff = DiagnoseGpu(full);
  const Finding* mem = FindKind(ff, FindingKind::kMemoryCapacity);
  ASSERT_NE(mem, nullptr);
  EXPECT_FALSE(mem->oom_eta_seconds.has_value());
}

// A job that loads its model (one step up, flat since) is no growth: the
// trailing trend fit across the step must not predict an OOM.
TEST(Diagnose, OneAllocationStepIsNoGrowth) {
  for (int step : {230, 250}) {
    FakeGpu g = MakeGpu(true);
    Fill(g, 300, [step](int i, Level& l) {
      if (i < step)
        l.util = 0, l.sm = 0, l.dram = 0, l.used_gib = 0.1;
      else
        l.used_gib = 60;
    });
    EXPECT_EQ(FindKind(DiagnoseGpu(g), FindingKind::kMemoryCapacity), nullptr) << step;
  }
}

// The same wherever the step falls in the window, and for a step that takes a
// few seconds (a loader filling memory): 0 to a flat 20 GiB of 80 is an
// allocation, not growth toward capacity.
TEST(Diagnose, OneAllocationStepIsNoGrowthAnywhereInTheWindow) {
  for (int ramp : {1, 5}) {
    for (int step = 5; step < 295; step += 5) {
      FakeGpu g = MakeGpu(true);
      Fill(g, 300, [step, ramp](int i, Level& l) {
        l.capacity_gib = 80;
        const double done = std::clamp((i - step + 1) / static_cast<double>(ramp), 0.0, 1.0);
        l.used_gib = 20 * done;
        if (done == 0) l.util = 0, l.sm = 0, l.dram = 0;
      });
      const std::vector<Finding> f = DiagnoseGpu(g);
      const Finding* mem = FindKind(f, FindingKind::kMemoryCapacity);
      EXPECT_EQ(mem, nullptr) << "step at " << step << " over " << ramp
                              << " s: " << (mem ? mem->verdict : "");
    }
  }
}

TEST(Diagnose, ThermalThrottleWithFallingClock) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) {
    if (i >= 100) {
      l.reasons = 0x60;
      l.temp = 89;
      l.clock = 1980 - (i - 100) * 1.5;  // falls to ~1680 MHz
    }
  });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kThermalThrottle));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("SM clock falling"));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("against slowdown at 89 C"));
  const Evidence* share = FindEvidence(f[0], "thermal_reason_share");
  ASSERT_NE(share, nullptr);
  EXPECT_NEAR(share->value, 200.0 / 300, 0.01);
}

TEST(Diagnose, ThrottleCountersWinOverBits) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int, Level&) {});
  // Bits say nothing, the sampler's integral says 50% thermal throttling.
  for (WindowPoint& p : g.points) {
    p.values[Index(Metric::kThrottleHwThermal)] = static_cast<float>((p.t - 1000) * 0.5);
    p.present.set(Index(Metric::kThrottleHwThermal));
  }
  std::vector<Finding> f = DiagnoseGpu(g);
  const Finding* t = FindKind(f, FindingKind::kThermalThrottle);
  ASSERT_NE(t, nullptr);
  EXPECT_NEAR(FindEvidence(*t, "thermal_reason_share")->value, 0.5, 0.01);
}

TEST(Diagnose, BriefPowerCapIsNormal) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) { l.reasons = i % 10 == 0 ? 0x4 : 0; });  // 10%
  EXPECT_THAT(Kinds(DiagnoseGpu(g)), ElementsAre(FindingKind::kComputeBound));
}

TEST(Diagnose, PowerCapSustained) {
  FakeGpu g = MakeGpu(true);
  g.latest.Set(Metric::kPowerLimit, 350);
  Fill(g, 300, [](int, Level& l) { l.reasons = 0x4, l.power = 349, l.clock = 1300; });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kPowerCap));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("349 W against a 350 W limit"));
}

TEST(Diagnose, PcieSaturatedWithSmWaiting) {
  FakeGpu g = MakeGpu(true);
  g.latest.Set(Metric::kPcieLinkGen, 3);
  g.latest.Set(Metric::kPcieLinkWidth, 8);
  Fill(g, 300, [](int, Level& l) { l.util = 70, l.sm = 30, l.pcie_rx = 7.0e9; });
  std::vector<Finding> f = DiagnoseGpu(g);
  EXPECT_THAT(Kinds(f),
              UnorderedElementsAreArray({FindingKind::kInterconnect, FindingKind::kPcieDegraded}));
  const Finding* ic = FindKind(f, FindingKind::kInterconnect);
  EXPECT_THAT(ic->verdict, ::testing::HasSubstr("PCIe at 7.0 GB/s of 7.9 GB/s"));
  EXPECT_THAT(FindKind(f, FindingKind::kPcieDegraded)->verdict,
              ::testing::HasSubstr("Gen3 x8 of Gen5 x16"));
}

TEST(Diagnose, GenerationDropAtIdleIsPowerSaving) {
  FakeGpu g = MakeGpu(true);
  g.latest.Set(Metric::kPcieLinkGen, 1);
  Fill(g, 300,
       [](int, Level& l) { l.util = 0, l.sm = 0, l.pcie_rx = 0, l.pcie_tx = 0, l.used_gib = 0; });
  EXPECT_THAT(Kinds(DiagnoseGpu(g)), ElementsAre(FindingKind::kIdle));
}

// A bursty job: the link retrains to Gen5 under load and parks at Gen1 in each
// idle gap; the latest sample falls in a gap. Not a degraded link.
TEST(Diagnose, LinkParkedInIdleGapsIsNotDegraded) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) {
    if (i % 20 >= 10) l.util = 0, l.sm = 0, l.pcie_rx = 0, l.pcie_tx = 0;
  });
  for (std::size_t i = 0; i < g.points.size(); ++i) {
    WindowPoint& p = g.points[i];
    p.values[Index(Metric::kPcieLinkGen)] = i % 20 >= 10 ? 1.0f : 5.0f;
    p.present.set(Index(Metric::kPcieLinkGen));
  }
  g.latest.Set(Metric::kPcieLinkGen, 1);
  std::vector<Finding> f = DiagnoseGpu(g);
  EXPECT_EQ(FindKind(f, FindingKind::kPcieDegraded), nullptr);
  EXPECT_EQ(FindKind(f, FindingKind::kInterconnect), nullptr);  // capacity at Gen5, not Gen1
  // The same job on a link that never trains above Gen3 is degraded.
  for (WindowPoint& p : g.points) p.values[Index(Metric::kPcieLinkGen)] = 3.0f;
  g.latest.Set(Metric::kPcieLinkGen, 3);
  EXPECT_NE(FindKind(DiagnoseGpu(g), FindingKind::kPcieDegraded), nullptr);
}

TEST(Diagnose, StarvedOscillatesWithQuietLinks) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) {
    if (i % 12 >= 6) l.util = 3, l.sm = 2, l.pcie_rx = 2e8;
  });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kStarved));
  EXPECT_NEAR(FindEvidence(f[0], "gap_share")->value, 0.5, 0.02);
}

TEST(Diagnose, MemoryBandwidthBound) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int, Level& l) { l.dram = 90, l.sm = 45; });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kMemoryBandwidth));
  EXPECT_FALSE(f[0].fallback);
  FakeGpu a = MakeGpu(false);
  Fill(a, 300, [](int, Level& l) { l.dram = 90; });
  std::vector<Finding> fa = DiagnoseGpu(a);
  ASSERT_THAT(Kinds(fa), ElementsAre(FindingKind::kMemoryBandwidth));
  EXPECT_TRUE(fa[0].fallback);
}

// Issue 12's case: a job that stopped a while ago, still holding its memory,
// is idle-held once the trailing idle run reaches idle_held_seconds, however
// busy the window was before it; the verdict says what the window shows.
TEST(Diagnose, IdleHeldFiresOnTheTrailingIdleRun) {
  FakeGpu g = MakeGpu(true);
  g.latest.processes.push_back({1234, "python3", static_cast<uint64_t>(60 * kGiB), {}, {}});
  Fill(g, 300, [](int i, Level& l) {
    l.util = i < 100 ? 98 : 0, l.sm = i < 100 ? 85 : 0, l.used_gib = 60;
  });
  std::vector<Finding> f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kIdleHeld));
  EXPECT_THAT(f[0].verdict,
              ::testing::HasSubstr("idle for the last 3m20s after 1m40s at 98% utilization"));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("hold 60.0 GiB"));
  const Evidence* idle = FindEvidence(f[0], "idle_seconds");
  ASSERT_NE(idle, nullptr);
  EXPECT_DOUBLE_EQ(idle->value, 200);
  EXPECT_DOUBLE_EQ(idle->threshold, 180);
  // No process visible (a container without the host's PIDs), 60 GiB
  // resident: still held.
  g.latest.processes.clear();
  f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kIdleHeld));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("60.0 GiB resident (no process visible)"));
  // Nothing resident: idle.
  g.latest.Set(Metric::kMemoryUsed, 0);
  f = DiagnoseGpu(g);
  ASSERT_THAT(Kinds(f), ElementsAre(FindingKind::kIdle));
  EXPECT_THAT(f[0].verdict, ::testing::HasSubstr("idle for the last 3m20s"));
}

// Issue 40: a held GPU is never idle. Mostly idle, but a short burst broke
// the idle time less than idle_held_seconds ago: neither idle nor idle-held.
TEST(Diagnose, AHeldGpuIsNeverIdle) {
  FakeGpu g = MakeGpu(true);
  g.latest.processes.push_back({1234, "python3", static_cast<uint64_t>(40 * kGiB), {}, {}});
  Fill(g, 300, [](int i, Level& l) {
    const bool burst = i >= 140 && i < 155;
    l.util = burst ? 98 : 0, l.sm = burst ? 85 : 0, l.used_gib = 40;
  });
  Judgement j = JudgeTrailing(g.info, g.points, g.latest, {});
  EXPECT_THAT(Kinds(j.findings), ::testing::IsEmpty());
  EXPECT_THAT(j.activity, ::testing::HasSubstr("40.0 GiB held (idle-held after 3m00s)"));
}

// Bursty serving: the model resident, requests answered in short bursts,
// a low mean. Neither idle nor idle-held: the activity line says serving.
TEST(Diagnose, BurstyServingIsServingNotIdle) {
  FakeGpu g = MakeGpu(true);
  ProcessInfo server{4321, "vllm", static_cast<uint64_t>(60 * kGiB), {}, {}};
  server.sm_utilization = 0.12;
  g.latest.processes.push_back(server);
  Fill(g, 300, [](int i, Level& l) {
    const bool burst = i % 30 < 2;
    l.util = burst ? 60 : 0, l.sm = burst ? 40 : 0, l.used_gib = 60;
  });
  Judgement j = JudgeTrailing(g.info, g.points, g.latest, {});
  EXPECT_THAT(Kinds(j.findings), ::testing::IsEmpty());
  EXPECT_THAT(j.activity, ::testing::HasSubstr("serving: bursty requests, 10 bursts"));
  EXPECT_THAT(j.activity, ::testing::HasSubstr("holding 60.0 GiB"));
  EXPECT_THAT(j.activity, ::testing::HasSubstr("processes at 12% SM lately"));
}

// Idle for two minutes after three of load: too early for idle-held, and no
// other finding; the window is described as idle, never as a steady load.
TEST(Diagnose, RecentlyIdleIsNotASteadyLoad) {
  FakeGpu g = MakeGpu(true);
  g.latest.processes.push_back({1234, "python3", static_cast<uint64_t>(60 * kGiB), {}, {}});
  Fill(g, 300, [](int i, Level& l) {
    l.util = i < 180 ? 60 : 0, l.sm = i < 180 ? 40 : 0, l.used_gib = 60;
  });
  EXPECT_TRUE(DiagnoseGpu(g).empty());
  // The 300 s of points are all within the default window: no cut needed.
  std::string what = JudgeTrailing(g.info, g.points, g.latest, {}).activity;
  EXPECT_THAT(what, ::testing::HasSubstr("idle for the last 2m00s after 3m00s at 60% utilization"));
  EXPECT_THAT(what, ::testing::HasSubstr("60.0 GiB held (idle-held after 3m00s)"));
  EXPECT_THAT(what, ::testing::Not(::testing::HasSubstr("steady")));
  FakeGpu steady = MakeGpu(true);
  Fill(steady, 300, [](int, Level& l) { l.util = 60, l.sm = 40; });
  EXPECT_THAT(JudgeTrailing(steady.info, steady.points, steady.latest, {}).activity,
              ::testing::HasSubstr("moderate, steady load: utilization 60%"));
}

// A limit that began 40 s before the end fills 13% of a 5-minute window: the
// rules also judge the recent horizons, so it is found now, not minutes
// later, and it says since when it holds.
TEST(Diagnose, RecentPowerCapIsFoundOverTheRecentSpan) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) {
    if (i >= 260) l.reasons = 0x4, l.clock = 1500, l.power = 690;
  });
  std::vector<Finding> f = DiagnoseGpu(g);
  const Finding* cap = FindKind(f, FindingKind::kPowerCap);
  ASSERT_NE(cap, nullptr);
  EXPECT_THAT(cap->verdict, ::testing::HasSubstr("66% of the last 1m00s"));
  EXPECT_NEAR(cap->since_seconds, 40, 1.5);
  EXPECT_EQ(FindKind(f, FindingKind::kComputeBound), nullptr);
  DiagnoseOptions whole_only;
  whole_only.recent_seconds = 0;
  EXPECT_EQ(FindKind(DiagnoseGpu(g, whole_only), FindingKind::kPowerCap), nullptr);
}

TEST(Diagnose, ShortWindowGivesNothing) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 20, [](int, Level&) {});
  EXPECT_TRUE(DiagnoseGpu(g).empty());
}

TEST(Diagnose, ShorterWindowLowersConfidence) {
  FakeGpu full = MakeGpu(true), part = MakeGpu(true);
  Fill(full, 300, [](int, Level&) {});
  Fill(part, 60, [](int, Level&) {});
  EXPECT_LT(DiagnoseGpu(part)[0].confidence, DiagnoseGpu(full)[0].confidence);
}

TEST(Diagnose, OnlyTrailingWindowIsUsed) {
  FakeGpu g = MakeGpu(true);
  // Throttled long ago, healthy in the last 5 minutes.
  Fill(g, 600, [](int i, Level& l) {
    if (i < 300) l.reasons = 0x60, l.clock = 1500;
  });
  EXPECT_THAT(Kinds(DiagnoseGpu(g)), ElementsAre(FindingKind::kComputeBound));
}

TEST(Kinds, NamesRoundTrip) {
  for (FindingKind k : kAllFindingKinds) EXPECT_EQ(KindFromName(KindName(k)), k);
  EXPECT_FALSE(KindFromName("nope").has_value());
}

}  // namespace
}  // namespace gpuscope::analysis
