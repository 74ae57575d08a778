// Job reports (jobs/report.h) and the ledger's JSON (jobs/usage_json.h).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobs/report.h"
#include "jobs/usage_json.h"
#include "test_paths.h"

namespace gpuscope::jobs {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A job on `n` GPUs for an hour, busy and healthy unless a test changes it.
JobUsage BusyJob(int n) {
  JobUsage u;
  u.kind = "job";
  u.id = "4242";
  u.hpc_job = "4242";
  u.start = 1000;
  for (int i = 0; i < n; ++i) {
    DeviceUsage d;
    d.device_key = d.uuid = "GPU-" + std::to_string(i);
    d.gpu = static_cast<unsigned>(i);
    d.hostname = "node1";
    d.held_seconds = 3600;
    d.busy_seconds = 3500;
    d.sm_active_seconds = 3000;
    d.sm_active_known = true;
    d.energy_joules = 3.6e6 * 0.5;
    d.energy_known = true;
    d.memory_peak_bytes = 60 * kGiB;
    d.memory_total_bytes = 80 * kGiB;
    u.devices.push_back(d);
  }
  return u;
}

std::vector<std::string> Kinds(const Report& r) {
  std::vector<std::string> out;
  for (const Note& n : r.notes) out.push_back(n.kind);
  return out;
}

TEST(JobReport, BusyHealthyJobGetsNoNotes) {
  Report r = BuildReport(BusyJob(2), {"agent http://x", 2.5, {}});
  EXPECT_TRUE(r.notes.empty()) << r.notes[0].text;
  EXPECT_DOUBLE_EQ(r.gpu_hours, 2);
  EXPECT_DOUBLE_EQ(r.energy_kwh, 1);
  ASSERT_TRUE(r.cost);
  EXPECT_DOUBLE_EQ(*r.cost, 5);
}

TEST(JobReport, JsonFollowsTheContract) {
  JobUsage u = BusyJob(1);
  u.end = 4600;
  u.devices[0].energy_known = false;
  nlohmann::json j = nlohmann::json::parse(ReportJson(BuildReport(u, {"agent http://x", {}, {}})));
  for (const char* key : {"job", "source", "start", "end", "gpus", "gpu_hours", "energy_kwh",
                          "idle_held_gpu_hours", "cost", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j.size(), 10u);
  EXPECT_EQ(j["job"], "job 4242");
  EXPECT_EQ(j["end"], 4600);
  EXPECT_TRUE(j["cost"].is_null());
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g.size(), 10u);
  EXPECT_EQ(g["uuid"], "GPU-0");
  EXPECT_EQ(g["gpu"], 0);
  EXPECT_NEAR(g["sm_active_ratio"].get<double>(), 3000.0 / 3600, 1e-12);
  EXPECT_TRUE(g["energy_joules"].is_null());  // unknown, never 0
  EXPECT_EQ(g["memory_total_bytes"], 80 * kGiB);
}

TEST(JobReport, UnusedGpusAreNamed) {
  JobUsage u = BusyJob(4);
  u.devices[2].busy_seconds = u.devices[3].busy_seconds = 0;
  Report r = BuildReport(u, {});
  ASSERT_EQ(Kinds(r), std::vector<std::string>{"gpus_unused"});
  EXPECT_NE(r.notes[0].text.find("2 of 4 GPUs were never used (GPU 2 on node1, GPU 3 on node1)"),
            std::string::npos)
      << r.notes[0].text;
}

TEST(JobReport, LightJobIsToldAMigProfile) {
  JobUsage u = BusyJob(1);
  u.devices[0].busy_seconds = 600;
  u.devices[0].sm_active_seconds = 200;
  u.devices[0].memory_peak_bytes = 7 * kGiB;
  Report r = BuildReport(u, {});
  ASSERT_EQ(Kinds(r), std::vector<std::string>{"mig_fit"});
  EXPECT_NE(r.notes[0].text.find("1g.10gb"), std::string::npos) << r.notes[0].text;
  u.devices[0].memory_peak_bytes = 15 * kGiB;  // 18 GiB with headroom: two slices
  EXPECT_NE(BuildReport(u, {}).notes[0].text.find("2g.20gb"), std::string::npos);
}

TEST(JobReport, IdleHeldThrottlingAndMemoryNotes) {
  JobUsage u = BusyJob(1);
  u.devices[0].idle_held_seconds = 900;
  u.devices[0].throttled_seconds = 360;
  u.devices[0].throttle_reason_seconds = {{"hw_thermal_slowdown", 300}, {"sw_power_cap", 60}};
  u.devices[0].memory_peak_bytes = 79 * kGiB;
  Report r = BuildReport(u, {});
  EXPECT_EQ(Kinds(r), (std::vector<std::string>{"idle_held", "throttled", "memory_near_capacity"}));
  EXPECT_NE(r.notes[1].text.find("10% of the time, mostly by hw_thermal_slowdown"),
            std::string::npos)
      << r.notes[1].text;
  EXPECT_NE(r.notes[2].text.find("99%"), std::string::npos) << r.notes[2].text;
}

TEST(JobReport, JobSlowerThanItsWorkloadsBaseline) {
  JobUsage u = BusyJob(1);  // SM active 3000 / 3600 = 83%
  ReportOptions o;
  o.baseline = WorkloadBaseline{"trainer", 0.85, 0.9};
  Report r = BuildReport(u, o);
  ASSERT_EQ(Kinds(r), std::vector<std::string>{"below_baseline"});
  EXPECT_NE(r.notes[0].text.find("SM activity was 83% where workload trainer usually runs at 90%"),
            std::string::npos)
      << r.notes[0].text;
  o.baseline->p5 = 0.8;  // within its usual band: nothing to say
  EXPECT_TRUE(BuildReport(u, o).notes.empty());
}

TEST(JobReport, ThresholdsFromYaml) {
  auto t = ParseThresholds("idle_held_min_seconds: 60\nthrottled_min_ratio: 0.5\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->idle_held_min_seconds, 60);
  EXPECT_EQ(t->throttled_min_ratio, 0.5);
  EXPECT_EQ(t->memory_near_capacity_ratio, NoteThresholds{}.memory_near_capacity_ratio);
  auto unknown = ParseThresholds("idle_held_minutes: 3\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("idle_held_minutes"), std::string::npos);
  EXPECT_FALSE(ParseThresholds("throttled_min_ratio: lots\n").ok());
  EXPECT_TRUE(ParseThresholds("").ok());
  // A site that raises the bar silences the note.
  JobUsage u = BusyJob(1);
  u.devices[0].throttled_seconds = 360;
  EXPECT_EQ(Kinds(BuildReport(u, {})), std::vector<std::string>{"throttled"});
  EXPECT_TRUE(BuildReport(u, {"", {}, *t}).notes.empty());
}

// The shipped file lists every key with its built-in default.
TEST(JobReport, ShippedThresholdsFileIsTheDefaults) {
  std::ifstream in(test_support::SourceDir() + "/deploy/reports/thresholds.yaml");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto t = ParseThresholds(text.str());
  ASSERT_TRUE(t.ok()) << t.status().message();
  const NoteThresholds d;
  EXPECT_EQ(t->unused_busy_ratio, d.unused_busy_ratio);
  EXPECT_EQ(t->mig_max_sm_active_ratio, d.mig_max_sm_active_ratio);
  EXPECT_EQ(t->mig_memory_headroom, d.mig_memory_headroom);
  EXPECT_EQ(t->idle_held_min_ratio, d.idle_held_min_ratio);
  EXPECT_EQ(t->idle_held_min_seconds, d.idle_held_min_seconds);
  EXPECT_EQ(t->throttled_min_ratio, d.throttled_min_ratio);
  EXPECT_EQ(t->memory_near_capacity_ratio, d.memory_near_capacity_ratio);
  const std::string all = text.str();
  for (const char* key : {"unused_busy_ratio:", "mig_max_sm_active_ratio:", "mig_memory_headroom:",
                          "idle_held_min_ratio:", "idle_held_min_seconds:", "throttled_min_ratio:",
                          "memory_near_capacity_ratio:"}) {
    EXPECT_NE(all.find(key), std::string::npos) << key;
  }
}

TEST(JobReport, HumanFormatsCarryTheNumbers) {
  JobUsage u = BusyJob(1);
  u.devices[0].idle_held_seconds = 900;
  Report r = BuildReport(u, {"agent http://x", {}, {}});
  const std::string table = ReportTable(r);
  EXPECT_NE(table.find("Report for job 4242 (agent http://x)"), std::string::npos) << table;
  EXPECT_NE(table.find("1.00 GPU-hours"), std::string::npos) << table;
  EXPECT_NE(table.find("15m00s"), std::string::npos) << table;
  const std::string md = ReportMarkdown(r);
  EXPECT_NE(md.find("| GPU | HOST |"), std::string::npos) << md;
  EXPECT_NE(md.find("- GPUs sat idle"), std::string::npos) << md;
}

TEST(UsageJson, RoundTrips) {
  JobUsage u = BusyJob(2);
  u.end = 5000;
  u.devices[1].sm_active_known = false;
  u.devices[0].throttle_reason_seconds = {{"sw_power_cap", 2}};
  u.findings.push_back({"idle_held", "GPU-0", 1200, 1300});
  auto back = ParseJobsBody(JobsBody({u}));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  const JobUsage& v = (*back)[0];
  EXPECT_EQ(v.id, "4242");
  EXPECT_EQ(v.end, 5000);
  EXPECT_FALSE(v.devices[1].sm_active_known);
  EXPECT_DOUBLE_EQ(v.devices[0].throttle_reason_seconds.at("sw_power_cap"), 2);
  EXPECT_EQ(v.findings[0].last, 1300);
  EXPECT_EQ(ReportJson(BuildReport(u, {})), ReportJson(BuildReport(v, {})));
  auto bad = ParseJobsBody(R"({"jobs": [{"kind": "job"}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"id\""), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseJobsBody("<html>").ok());
}

TEST(JobReport, PodsFoldIntoTheirNamespace) {
  JobUsage a = BusyJob(1), b = BusyJob(2), c = BusyJob(1);
  a.kind = b.kind = c.kind = "pod";
  a.id = "ml/trainer-0", b.id = "ml/trainer-1", c.id = "web/infer-0";
  a.start = 500, a.end = 2000;
  c.end = 4000;
  std::vector<JobUsage> folded = FoldByNamespace({a, b, c});
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[0].kind, "namespace");
  EXPECT_EQ(folded[0].id, "ml");
  EXPECT_FALSE(folded[0].end);  // trainer-1 still runs
  EXPECT_EQ(folded[0].start, 500);
  EXPECT_EQ(folded[0].devices.size(), 3u);
  EXPECT_DOUBLE_EQ(BuildReport(folded[0], {}).gpu_hours, 3);
  EXPECT_EQ(folded[1].id, "web");
  ASSERT_TRUE(folded[1].end);
  EXPECT_EQ(*folded[1].end, 4000);
}

}  // namespace
}  // namespace gpuscope::jobs
