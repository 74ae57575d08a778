// The chargeback table's holders from Prometheus answers (jobs/prom_tenants.h).
#include <gtest/gtest.h>

#include "jobs/prom_tenants.h"

namespace gpuscope::jobs {
namespace {

// A per-holder, per-GPU answer sample.
baseline::Sample Row(const std::string& job, const std::string& gpu, double value,
                     const std::string& instance = "node1:9400") {
  baseline::Sample s;
  s.labels = {{"instance", instance}, {"gpu", gpu}, {"uuid", "GPU-" + gpu}, {"hpc_job", job}};
  s.value = value;
  return s;
}

TEST(PromTenants, QueriesJoinBothAttributionModesOnTheGpu) {
  auto q = TenantsQueries({"pod", 3600, 15});
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->size(), 8u);
  for (const std::string& text : *q) {
    // Info mode's holder series and series mode's labelled GPU series, pods only.
    EXPECT_NE(text.find("gpuscope_gpu_holder_info{gpu_instance=\"\",pod!=\"\"}"), std::string::npos)
        << text;
    EXPECT_NE(text.find("gpuscope_gpu_info|gpuscope_gpu_lost"), std::string::npos) << text;
    EXPECT_NE(text.find("sum by (namespace, pod, instance, gpu, uuid)"), std::string::npos) << text;
    EXPECT_NE(text.find("[3600s:15s]"), std::string::npos) << text;
  }
  // Held: the shares summed over the steps, times the step.
  EXPECT_TRUE((*q)[2].starts_with("sum_over_time(")) << (*q)[2];
  EXPECT_TRUE((*q)[2].ends_with("[3600s:15s]) * 15")) << (*q)[2];
  // A counter's increase over each step, credited by share.
  EXPECT_NE((*q)[4].find("gpuscope_energy_joules_total{gpu_instance=\"\"} offset 15s"),
            std::string::npos)
      << (*q)[4];
  // The share: measured where the agent exports it, else 1 / holders.
  EXPECT_NE(
      (*q)[2].find("gpuscope_gpu_holder_sm_share_ratio{gpu_instance=\"\",workload!=\"\"}) > 0"),
      std::string::npos)
      << (*q)[2];
  EXPECT_NE((*q)[2].find(" or ("), std::string::npos) << (*q)[2];
  // The steps shared, and of those measured: the split each row names.
  EXPECT_TRUE((*q)[6].starts_with("count_over_time(")) << (*q)[6];
  EXPECT_NE((*q)[7].find("gpuscope_gpu_holder_sm_share_ratio"), std::string::npos) << (*q)[7];
  EXPECT_FALSE(TenantsQueries({"node", 60, 1}).ok());
}

TEST(PromTenants, AnswersBecomeOneUsagePerHolder) {
  const TenantsQuery q{"job", 3600, 15};
  std::vector<std::vector<baseline::Sample>> a(8);
  a[0] = {Row("7", "0", 1000), Row("7", "1", 1000, "node2:9400"), Row("9", "2", 2000)};  // first
  a[1] = {Row("7", "0", 2000), Row("7", "1", 2100, "node2:9400"), Row("9", "2", 4600)};  // last
  a[2] = {Row("7", "0", 1000), Row("7", "1", 550, "node2:9400"), Row("9", "2", 2600)};   // held
  a[3] = {Row("7", "0", 900), Row("9", "2", 2600), Row("5", "3", 1)};  // busy; 5 never held
  a[4] = {Row("7", "0", 3e5), Row("7", "1", 1e5, "node2:9400")};       // energy
  a[5] = {Row("7", "1", 500, "node2:9400")};                           // idle-held
  a[6] = {Row("7", "1", 40, "node2:9400"), Row("9", "2", 100)};        // steps shared
  a[7] = {Row("9", "2", 100)};                                         // of them measured
  auto rows = TenantsFromAnswers(q, a, 4610);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  // Running first.
  const JobUsage& running = (*rows)[0];
  EXPECT_EQ(running.id, "9");
  EXPECT_EQ(running.kind, "job");
  EXPECT_FALSE(running.end);
  EXPECT_EQ(running.start, 2000);
  const JobUsage& ended = (*rows)[1];
  EXPECT_EQ(ended.id, "7");
  ASSERT_TRUE(ended.end);
  EXPECT_EQ(*ended.end, 2100);
  ASSERT_EQ(ended.devices.size(), 2u);
  EXPECT_EQ(ended.devices[0].hostname, "node1:9400");
  EXPECT_DOUBLE_EQ(ended.devices[0].held_seconds, 1000);
  EXPECT_DOUBLE_EQ(ended.devices[0].busy_seconds, 900);
  EXPECT_DOUBLE_EQ(ended.devices[0].energy_joules, 3e5);
  EXPECT_EQ(ended.devices[1].gpu, 1u);
  EXPECT_DOUBLE_EQ(ended.devices[1].held_seconds, 550);  // shared: half its 1100 s
  EXPECT_DOUBLE_EQ(ended.devices[1].idle_held_seconds, 500);
  EXPECT_FALSE(running.devices[0].energy_known);
  EXPECT_EQ(ended.devices[0].split, "sole holder");
  EXPECT_EQ(ended.devices[1].split, "even split");
  EXPECT_EQ(running.devices[0].split, "measured");
}

TEST(PromTenants, NoHolderNoRow) {
  auto rows =
      TenantsFromAnswers({"workload", 60, 1}, std::vector<std::vector<baseline::Sample>>(8), 100);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  EXPECT_FALSE(TenantsFromAnswers({"job", 60, 1}, {}, 100).ok());
}

}  // namespace
}  // namespace gpuscope::jobs
