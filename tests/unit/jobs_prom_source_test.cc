// A holder's usage from Prometheus answers (jobs/prom_source.h).
#include <gtest/gtest.h>

#include "jobs/prom_source.h"

namespace gpuscope::jobs {
namespace {

baseline::Sample At(const std::string& gpu, double value, const std::string& reason = "") {
  baseline::Sample s;
  s.labels = {{"instance", "node1:9400"}, {"gpu", gpu}, {"uuid", "GPU-" + gpu}};
  if (!reason.empty()) s.labels["reason"] = reason;
  s.value = value;
  return s;
}

TEST(PromSource, QueriesSelectTheHolder) {
  auto q = UsageQueries({"pod", "ml/trainer-0", 3600, 15});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ((*q)[0],
            "min_over_time(timestamp(gpuscope_gpu_lost{namespace=\"ml\",pod=\"trainer-0\"})"
            "[3600s:15s])");
  EXPECT_NE((*q)[4].find("gpuscope_energy_joules_total{namespace=\"ml\",pod=\"trainer-0\"}[3600s]"),
            std::string::npos)
      << (*q)[4];
  auto quoted = UsageQueries({"job", "4\"2", 60, 1});
  ASSERT_TRUE(quoted.ok());
  EXPECT_NE((*quoted)[0].find("hpc_job=\"4\\\"2\""), std::string::npos) << (*quoted)[0];
  EXPECT_FALSE(UsageQueries({"pod", "no-namespace", 60, 1}).ok());
  EXPECT_FALSE(UsageQueries({"node", "x", 60, 1}).ok());
}

TEST(PromSource, AnswersBecomeTheUsage) {
  const PromQuery q{"job", "4242", 3600, 15};
  std::vector<std::vector<baseline::Sample>> a(9);
  a[0] = {At("0", 1000), At("1", 1015)};  // first sample
  a[1] = {At("0", 4600), At("1", 4600)};  // last sample
  a[2] = {At("0", 3500)};                 // busy
  a[3] = {At("0", 3000)};                 // SM active
  a[4] = {At("0", 1.8e6), At("1", 2e5)};  // energy
  a[5] = {At("1", 3000)};                 // idle-held
  a[6] = {At("0", 100, "sw_power_cap"), At("0", 50, "hw_thermal_slowdown")};
  a[7] = {At("0", 60e9), At("1", 20e9)};  // peak memory
  a[8] = {At("0", 80e9), At("1", 80e9)};  // total memory
  auto u = UsageFromAnswers(q, a, 4610);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->start, 1000);
  EXPECT_FALSE(u->end);  // last sample within 3 steps of now: running
  ASSERT_EQ(u->devices.size(), 2u);
  const DeviceUsage& d0 = u->devices[0];
  EXPECT_EQ(d0.gpu, 0u);
  EXPECT_EQ(d0.hostname, "node1:9400");
  EXPECT_DOUBLE_EQ(d0.held_seconds, 3600);
  EXPECT_DOUBLE_EQ(d0.busy_seconds, 3500);
  EXPECT_TRUE(d0.sm_active_known);
  EXPECT_DOUBLE_EQ(d0.throttled_seconds, 150);
  EXPECT_DOUBLE_EQ(d0.throttle_reason_seconds.at("sw_power_cap"), 100);
  const DeviceUsage& d1 = u->devices[1];
  EXPECT_DOUBLE_EQ(d1.held_seconds, 3585);
  EXPECT_FALSE(d1.sm_active_known);
  EXPECT_DOUBLE_EQ(d1.idle_held_seconds, 3000);
  auto ended = UsageFromAnswers(q, a, 5000);
  ASSERT_TRUE(ended.ok());
  ASSERT_TRUE(ended->end);
  EXPECT_EQ(*ended->end, 4600);
}

TEST(PromSource, BaselineOfTheJobsWorkload) {
  JobUsage u;
  EXPECT_TRUE(BaselineQueries(u).empty());  // no workload, no baseline
  u.namespace_name = "ml";
  u.workload = "trainer";
  auto q = BaselineQueries(u);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0],
            "gpuscope:workload_signal:p5_14d{signal=\"sm_active\",namespace=\"ml\","
            "workload=\"trainer\",hpc_job=\"\"}");
  baseline::Sample p5, p50, warming;
  p5.value = 0.6, p50.value = 0.8, warming.value = 0;
  auto b = BaselineFromAnswers(u, {{p5}, {p50}, {warming}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->workload, "trainer");
  EXPECT_EQ(b->p5, 0.6);
  EXPECT_EQ(b->p50, 0.8);
  warming.value = 1;
  EXPECT_FALSE(BaselineFromAnswers(u, {{p5}, {p50}, {warming}}));
  EXPECT_FALSE(BaselineFromAnswers(u, {{p5}, {p50}, {}}));
}

TEST(PromSource, UnknownHolderIsNamed) {
  std::vector<std::vector<baseline::Sample>> none(9);
  auto u = UsageFromAnswers({"job", "999", 3600, 15}, none, 0);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("no job '999'"), std::string::npos) << u.status().message();
}

}  // namespace
}  // namespace gpuscope::jobs
