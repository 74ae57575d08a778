// A MIG instance has no utilization of its own (NVML answers it per GPU
// only): the diagnosis judges it on its own GPM activity, never its parent's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/diagnosis.h"
#include "analysis/mig.h"
#include "analysis/monitor.h"
#include "analysis_test_util.h"
#include "collect/stepped.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::analysis {
namespace {

using test_util::FakeGpu;
using test_util::Fill;
using test_util::Level;
using test_util::MakeGpu;
using ::testing::Contains;
using ::testing::Not;

// A 3g.40gb instance whose points carry GPM graphics-engine activity in place
// of utilization, as the sampler reads a MIG device.
FakeGpu MigInstance(double activity_percent, double sm_percent) {
  FakeGpu g = MakeGpu(true);
  g.info.gpu_instance_id = 1;
  g.info.compute_instance_id = 0;
  g.info.mig_uuid = "MIG-1";
  g.info.mig_profile = "3g.40gb";
  Fill(g, 300, [&](int, Level& l) {
    l.util = activity_percent;
    l.sm = sm_percent;
    if (activity_percent == 0) l.used_gib = 0;  // no process on it
  });
  for (WindowPoint& p : g.points) {
    // NVML answers clocks, temperature and power for the parent only.
    for (Metric m : kParentMetrics) p.present.reset(Index(m));
    p.values[Index(Metric::kGrEngineActive)] = p.values[Index(Metric::kGpuUtil)];
    p.present.set(Index(Metric::kGrEngineActive));
    p.present.reset(Index(Metric::kGpuUtil));
  }
  g.latest.Clear(Metric::kGpuUtil);
  g.latest.Set(Metric::kGrEngineActive, activity_percent);
  return g;
}

std::vector<FindingKind> Kinds(const FakeGpu& g) {
  std::vector<FindingKind> out;
  for (const Finding& f : Diagnose(g.info, g.points, g.latest, {})) out.push_back(f.kind);
  return out;
}

TEST(DiagnoseMig, AnIdleInstanceIsIdleOnItsOwnActivity) {
  EXPECT_THAT(Kinds(MigInstance(0, 0)), Contains(FindingKind::kIdle));
}

TEST(DiagnoseMig, ABusyInstanceIsNotIdle) {
  const auto kinds = Kinds(MigInstance(97, 85));
  EXPECT_THAT(kinds, Not(Contains(FindingKind::kIdle)));
  EXPECT_THAT(kinds, Contains(FindingKind::kComputeBound));
}

// The parent GPU at its thermal slowdown: 91 C, thermal reason bits set,
// the SM clock held at 1100 MHz.
FakeGpu HotParent() {
  FakeGpu g = MakeGpu(true);
  g.info.mig_enabled = true;
  Fill(g, 300, [](int, Level& l) {
    l.temp = 91;
    l.clock = 1100;
    l.reasons = 0x20 | 0x40;
  });
  for (WindowPoint& p : g.points) p.present.reset(Index(Metric::kGpuUtil));
  return g;
}

std::vector<Finding> InstanceFindings(const FakeGpu& instance, const FakeGpu& parent) {
  std::vector<WindowPoint> points = WithParentMetrics(instance.points, parent.points);
  return Diagnose(instance.info, points, instance.latest, {});
}

TEST(DiagnoseMig, ABusyInstanceCarriesItsHotParentsThrottle) {
  const std::vector<Finding> found = InstanceFindings(MigInstance(97, 85), HotParent());
  const Finding* f = FindKind(found, FindingKind::kThermalThrottle);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(FindKind(found, FindingKind::kComputeBound), nullptr);
  EXPECT_THAT(f->verdict, ::testing::HasSubstr("on its parent GPU 0"));
  ASSERT_FALSE(f->evidence.empty());
  for (const Evidence& e : f->evidence) EXPECT_EQ(e.signal.rfind("parent_", 0), 0u) << e.signal;
}

TEST(DiagnoseMig, AnEmptyInstanceOfAHotParentStaysIdle) {
  const std::vector<Finding> found = InstanceFindings(MigInstance(0, 0), HotParent());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, FindingKind::kIdle);
}

TEST(DiagnoseMig, AnInstanceInheritsOnlyWhereItRan) {
  FakeGpu instance = MigInstance(97, 85);
  for (std::size_t i = 0; i < instance.points.size() / 2; ++i) {
    instance.points[i].values[Index(Metric::kGrEngineActive)] = 0;
  }
  std::vector<WindowPoint> points = WithParentMetrics(instance.points, HotParent().points);
  EXPECT_FALSE(points.front().Has(Metric::kGpuTemp));
  EXPECT_TRUE(points.back().Has(Metric::kGpuTemp));
  EXPECT_EQ(points.back().Get(Metric::kClockReasons), 0x20 | 0x40);
}

TEST(DiagnoseMig, OnlyTheClockTemperatureAndPowerRulesAreInherited) {
  std::vector<std::string> inherited;
  for (const Rule& r : kRules) {
    if (InheritedFromParent(r)) inherited.emplace_back(r.name);
  }
  EXPECT_EQ(inherited, (std::vector<std::string>{"thermal_throttle", "power_cap"}));
}

// serve's monitor runs the same diagnosis: on the simulator, an H100 at its
// thermal slowdown exports gpuscope_bottleneck{kind="thermal_throttle"} 1 for
// its busy instances (slots 1, 2) and idle for the empty one (slot 3).
TEST(DiagnoseMig, ServesMonitorExportsTheParentsThrottleForBusyInstances) {
  const std::filesystem::path scenario = std::filesystem::path(test_support::SourceDir()) /
                                         "sim/scenarios/diagnosis/mig-throttle.yaml";
  test_support::ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario.string());
  collect::SteppedOptions o;
  o.nvml_path = test_support::SimLibraryPath();
  o.end_seconds = 120;
  Result<collect::SteppedRun> run = collect::SampleSteps(o);
  ASSERT_TRUE(run.ok()) << run.status().message();
  DiagnosisMonitor monitor(MonitorOptions{});
  monitor.Update(*run->snapshot, run->sampler->window());
  std::map<std::pair<int, std::string>, double> found;
  for (const prom::Family& f : monitor.Families()) {
    if (f.name != "gpuscope_bottleneck") continue;
    for (const prom::Sample& s : f.samples) found[{s.gpu, s.labels.at(0).second}] = s.value;
  }
  for (int slot : {0, 1, 2}) EXPECT_EQ((found[{slot, "thermal_throttle"}]), 1) << slot;
  for (int slot : {1, 2}) EXPECT_EQ((found[{slot, "compute_bound"}]), 0) << slot;
  EXPECT_EQ((found[{3, "thermal_throttle"}]), 0);
  EXPECT_EQ((found[{3, "idle"}]), 1);
}

}  // namespace
}  // namespace gpuscope::analysis
