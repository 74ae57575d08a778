#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "health/report.h"
#include "health_test_util.h"
#include "serve/health.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::serve {
namespace {

using health::Check;
using health::EventState;
using health::FormatReport;
using health::HealthReport;
using health::Verdict;
using test_support::ScopedEnv;

HealthRunOptions SimOptions() {
  HealthRunOptions o;
  o.sampler.nvml_path = test_support::SimLibraryPath();
  return o;
}

TEST(RunHealthOnce, HealthyNodeExitsZero) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO",
                     test_support::SourceDir() + "/sim/scenarios/health/power-brake.yaml");
  ScopedEnv frozen("GPUSCOPE_SIM_FROZEN_TIME", "2");  // before the brake
  HealthReport r = RunHealthOnce(SimOptions());
  ASSERT_EQ(r.gpus.size(), 2u) << FormatReport(r);
  EXPECT_TRUE(r.nvml_up);
  EXPECT_TRUE(r.events_running);
  EXPECT_EQ(r.verdict, Verdict::kOk) << FormatReport(r, {true});
}

TEST(RunHealthOnce, LostGpuFails) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO",
                     test_support::SourceDir() + "/sim/scenarios/health/xid-79-lost.yaml");
  ScopedEnv frozen("GPUSCOPE_SIM_FROZEN_TIME", "20");  // GPU 3 fell off at t = 10 s
  HealthReport r = RunHealthOnce(SimOptions());
  const std::string text = FormatReport(r);
  ASSERT_EQ(r.gpus.size(), 4u) << text;
  EXPECT_TRUE(r.gpus[3].lost) << text;
  EXPECT_EQ(r.gpus[3].Get(Check::kDriver).verdict, Verdict::kFail) << text;
  EXPECT_EQ(r.gpus[0].verdict, Verdict::kOk) << text;
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(text.find("GPU lost"), std::string::npos) << text;
}

TEST(RunHealthOnce, WithoutNvmlTheNodeFails) {
  HealthRunOptions o;
  o.sampler.nvml_path = "/nonexistent/libnvidia-ml.so.1";
  HealthReport r = RunHealthOnce(o);
  EXPECT_FALSE(r.nvml_up);
  EXPECT_FALSE(r.nvml_error.empty());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(FormatReport(r).find("NVML is down"), std::string::npos);
}

TEST(JudgeCycle, FoldsXidsIntoTheSnapshotAndKeepsRates) {
  health::HealthState state;
  Snapshot snap = health::testing::HealthyNode(1);
  snap.samples[0].Set(Metric::kPcieLinkGen, 3);
  snap.samples[0].Set(Metric::kPcieReplays, 0);
  EventState events;
  events.gpus[0].xid_counts = {{13, 2}};
  events.gpus[0].last_xid = 13;
  Snapshot first = snap;
  HealthReport report = JudgeCycle(first, events, state, health::testing::kNow, {});
  EXPECT_EQ(first.samples[0].xid_counts.at(13), 2u);
  EXPECT_EQ(first.samples[0].Find(Metric::kXidLast), 13);
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_EQ(report.gpus[0].xid_totals.at(13), 2u);
  snap.samples[0].Set(Metric::kPcieReplays, 600);  // 600 in a minute at Gen3 x16 (limit 8)
  report = JudgeCycle(snap, events, state, health::testing::kNow + 60, {});
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_EQ(report.gpus[0].Get(Check::kPcie).verdict, Verdict::kWarn);
}

}  // namespace
}  // namespace gpuscope::serve
