#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "health/report.h"
#include "health/service.h"
#include "health_test_util.h"
#include "sim_fixture.h"

namespace gpuscope::health {
namespace {

using test_support::ScopedEnv;

RunOptions SimOptions() {
  RunOptions o;
  o.sampler.nvml_path = test_support::SimLibraryPath();
  return o;
}

TEST(RunOnce, HealthyNodeExitsZero) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO",
                     GPUSCOPE_SOURCE_DIR "/sim/scenarios/health/power-brake.yaml");
  ScopedEnv frozen("GPUSCOPE_SIM_FROZEN_TIME", "2");  // before the brake
  HealthReport r = RunOnce(SimOptions());
  ASSERT_EQ(r.gpus.size(), 2u) << FormatReport(r);
  EXPECT_TRUE(r.nvml_up);
  EXPECT_TRUE(r.events_running);
  EXPECT_EQ(r.verdict, Verdict::kOk) << FormatReport(r, {true});
  EXPECT_EQ(ExitCode(r), 0);
}

TEST(RunOnce, LostGpuFailsWithExitCodeTwo) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO",
                     GPUSCOPE_SOURCE_DIR "/sim/scenarios/health/xid-79-lost.yaml");
  ScopedEnv frozen("GPUSCOPE_SIM_FROZEN_TIME", "20");  // GPU 3 fell off at t = 10 s
  HealthReport r = RunOnce(SimOptions());
  const std::string text = FormatReport(r);
  ASSERT_EQ(r.gpus.size(), 4u) << text;
  EXPECT_TRUE(r.gpus[3].lost) << text;
  EXPECT_EQ(r.gpus[3].Get(Check::kDriver).verdict, Verdict::kFail) << text;
  EXPECT_EQ(r.gpus[0].verdict, Verdict::kOk) << text;
  EXPECT_EQ(ExitCode(r), 2);
  EXPECT_NE(text.find("GPU lost"), std::string::npos) << text;
}

TEST(RunOnce, WithoutNvmlTheNodeFails) {
  RunOptions o;
  o.sampler.nvml_path = "/nonexistent/libnvidia-ml.so.1";
  HealthReport r = RunOnce(o);
  EXPECT_FALSE(r.nvml_up);
  EXPECT_FALSE(r.nvml_error.empty());
  EXPECT_EQ(ExitCode(r), 2);
  EXPECT_NE(FormatReport(r).find("NVML is down"), std::string::npos);
}

TEST(Service, KeepsRatesBetweenUpdatesAndTheLatestReport) {
  Service service;
  Snapshot snap = testing::HealthyNode(1);
  snap.samples[0].Set(Metric::kPcieLinkGen, 3);
  snap.samples[0].Set(Metric::kPcieReplays, 0);
  EventState events;
  auto families = service.Update(snap, events, testing::kNow);
  ASSERT_FALSE(families.empty());
  EXPECT_EQ(families[0].name, "gpuscope_gpu_health");
  snap.samples[0].Set(Metric::kPcieReplays, 600);  // 600 in a minute at Gen3 x16 (limit 8)
  service.Update(snap, events, testing::kNow + 60);
  const HealthReport latest = service.Latest();
  ASSERT_EQ(latest.gpus.size(), 1u);
  EXPECT_EQ(latest.gpus[0].Get(Check::kPcie).verdict, Verdict::kWarn);
}

}  // namespace
}  // namespace gpuscope::health
