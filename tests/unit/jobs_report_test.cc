// Job reports (jobs/report.h) and the ledger's JSON (jobs/usage_json.h).
#include <gtest/gtest.h>

#include <cmath>
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
  EXPECT_EQ(g.size(), 12u);
  EXPECT_TRUE(g["split"].is_null());  // the source did not split
  EXPECT_EQ(g["uuid"], "GPU-0");
  EXPECT_EQ(g["gpu"], 0);
  EXPECT_NEAR(g["sm_active_ratio"].get<double>(), 3000.0 / 3600, 1e-12);
  EXPECT_TRUE(g["energy_joules"].is_null());  // unknown, never 0
  EXPECT_EQ(g["memory_total_bytes"], 80 * kGiB);
  EXPECT_TRUE(g["mig_profile"].is_null());  // a whole GPU
}

// A MIG instance's row names its profile in JSON as the table does ("7 (3g.40gb)"):
// without it the row read as the whole GPU 7 (same gpu, same parent uuid).
TEST(JobReport, MigInstanceRowNamesItsProfile) {
  JobUsage u = BusyJob(1);
  u.devices[0].device_key = u.devices[0].uuid + "/1";
  u.devices[0].gpu = 7;
  u.devices[0].mig_profile = "3g.40gb";
  const Report r = BuildReport(u, {"agent http://x", {}, {}});
  EXPECT_NE(ReportTable(r).find("7 (3g.40gb)"), std::string::npos) << ReportTable(r);
  const nlohmann::json j = nlohmann::json::parse(ReportJson(r));
  EXPECT_EQ(j["gpus"][0]["gpu"], 7);
  EXPECT_EQ(j["gpus"][0]["mig_profile"], "3g.40gb");
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
  EXPECT_EQ(t->first_kernel_min_seconds, d.first_kernel_min_seconds);
  const std::string all = text.str();
  for (const char* key : {"unused_busy_ratio:", "mig_max_sm_active_ratio:", "mig_memory_headroom:",
                          "idle_held_min_ratio:", "idle_held_min_seconds:", "throttled_min_ratio:",
                          "memory_near_capacity_ratio:", "first_kernel_min_seconds:"}) {
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

// Each GPU-holder row names how a shared GPU was split for it.
TEST(JobReport, RowsNameTheSplit) {
  JobUsage u = BusyJob(2);
  u.devices[0].split = "measured";
  u.devices[1].split = "even split";
  Report r = BuildReport(u, {"agent http://x", {}, {}});
  nlohmann::json j = nlohmann::json::parse(ReportJson(r));
  EXPECT_EQ(j["gpus"][0]["split"], "measured");
  EXPECT_EQ(j["gpus"][1]["split"], "even split");
  const std::string table = ReportTable(r);
  EXPECT_NE(table.find("THROTTLED  SPLIT"), std::string::npos) << table;
  EXPECT_NE(table.find("measured"), std::string::npos) << table;
  EXPECT_NE(table.find("even split"), std::string::npos) << table;
  EXPECT_NE(ReportMarkdown(r).find("| THROTTLED | SPLIT |"), std::string::npos);
  // One tenant row: its GPUs' methods differ.
  EXPECT_NE(TenantsTable({r}, false).find("  mixed\n"), std::string::npos)
      << TenantsTable({r}, false);
  EXPECT_EQ(nlohmann::json::parse(TenantsJson({r}))["tenants"][0]["split"], "mixed");
  u.devices[1].split = "measured";
  EXPECT_NE(TenantsTable({BuildReport(u, {})}, true).find("| measured |"), std::string::npos);
}

TEST(UsageJson, SplitRoundTripsAndOlderAgentsSplitEvenly) {
  JobUsage u = BusyJob(1);
  u.devices[0].split = "measured";
  auto back = ParseJobsBody(JobsBody({u}));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)[0].devices[0].split, "measured");
  nlohmann::json old = nlohmann::json::parse(JobsBody({u}));
  old["jobs"][0]["devices"][0].erase("split");
  back = ParseJobsBody(old.dump());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)[0].devices[0].split, "even split");
  for (const nlohmann::json& bad : {nlohmann::json("by magic"), nlohmann::json(1)}) {
    old["jobs"][0]["devices"][0]["split"] = bad;
    back = ParseJobsBody(old.dump());
    ASSERT_FALSE(back.ok());
    EXPECT_NE(back.status().message().find("\"split\" is not one of"), std::string::npos)
        << back.status().message();
  }
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

// An agent's answer with a field of the wrong type anywhere: a clear error
// naming the field, never an exception or a cast out of range (issue 39).
TEST(UsageJson, WrongTypesAreClearErrors) {
  const nlohmann::json good = nlohmann::json::parse(JobsBody({BusyJob(1)}));
  ASSERT_TRUE(ParseJobsBody(good.dump()).ok());
  struct Case {
    std::string pointer;  // what to change, as a JSON pointer
    nlohmann::json value;
    std::string want;  // in the error
  };
  const Case cases[] = {
      {"/jobs/0/kind", 1, "\"kind\" has the wrong type"},
      {"/jobs/0/id", nullptr, "\"id\" has the wrong type"},
      {"/jobs/0/start", "1000", "\"start\" has the wrong type"},
      {"/jobs/0/start", true, "\"start\" has the wrong type"},
      {"/jobs/0/end", "later", "\"end\" has the wrong type"},
      {"/jobs/0/devices", nlohmann::json::object(), "\"devices\" is not an array"},
      {"/jobs/0/devices", 3, "\"devices\" is not an array"},
      {"/jobs/0/findings", "x", "\"findings\" is not an array"},
      {"/jobs/0/devices/0", 1, "a device is not a JSON object"},
      {"/jobs/0/devices/0/gpu", -1, "\"gpu\" has the wrong type"},
      {"/jobs/0/devices/0/gpu", 1e300, "\"gpu\" has the wrong type"},
      {"/jobs/0/devices/0/gpu", 5000000000u, "\"gpu\" has the wrong type"},
      {"/jobs/0/devices/0/hostname", nlohmann::json::array(), "\"hostname\" has the wrong type"},
      {"/jobs/0/devices/0/held_seconds", nlohmann::json::array({1, "2"}), "\"held_seconds\""},
      {"/jobs/0/devices/0/throttle_reason_seconds", nlohmann::json::array(),
       "\"throttle_reason_seconds\" has the wrong type"},
      {"/jobs/0/devices/0/throttle_reason_seconds",
       {{"sw_power_cap", "2"}},
       "\"throttle_reason_seconds\" has the wrong type"},
      {"/jobs/0/devices/0/energy_joules", "a lot", "\"energy_joules\" has the wrong type"},
  };
  for (const Case& c : cases) {
    nlohmann::json body = good;
    body[nlohmann::json::json_pointer(c.pointer)] = c.value;
    Result<std::vector<JobUsage>> r = ParseJobsBody(body.dump());
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos)
        << c.pointer << ": " << r.status().message();
    EXPECT_NE(r.status().message().find("jobs[0]"), std::string::npos) << r.status().message();
  }
  nlohmann::json findings = good;
  findings["jobs"][0]["findings"] = {1};
  EXPECT_FALSE(ParseJobsBody(findings.dump()).ok());
  findings["jobs"][0]["findings"] = {{{"kind", "idle_held"}, {"device_key", 0}}};
  EXPECT_FALSE(ParseJobsBody(findings.dump()).ok());
  EXPECT_FALSE(ParseJobsBody(R"({"jobs": {}})").ok());
  EXPECT_NE(ParseJobsBody(R"({"jobs": )" + std::string(1 << 20, '['))
                .status()
                .message()
                .find("nests deeper than 32 levels"),
            std::string::npos);
  EXPECT_FALSE(ParseJobsBody(R"({"jobs": [1]})").ok());
}

// Impossible values from a source are refused with the holder, device and
// field named (issue 39: dates like -219246529-01-00, negative GPU-hours).
TEST(JobReport, ImpossibleUsageIsRefused) {
  EXPECT_TRUE(CheckUsage(BusyJob(2)).ok());
  auto problem = [](auto&& change) {
    JobUsage u = BusyJob(1);
    change(u);
    return CheckUsage(u).message();
  };
  EXPECT_NE(problem([](JobUsage& u) { u.start = -6.9e15; })
                .find("job 4242: impossible usage: "
                      "start is -6900000000000000 (negative)"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) { u.start = 1e300; }).find("past the year 9999"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) { u.end = 10; }).find("end 10 is before start 1000"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) { u.end = std::nan(""); }).find("end is nan (not a number)"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) {
              u.devices[0].held_seconds = -3600;
            }).find("device GPU-0: held_seconds is -3600 (negative)"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) {
              u.devices[0].energy_joules = INFINITY;
            }).find("energy_joules is inf"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) {
              u.devices[0].idle_held_seconds = 9.3e18;
            }).find("idle_held_seconds"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) {
              u.devices[0].throttle_reason_seconds["x"] = -1;
            }).find("throttle reason"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) {
              u.findings.push_back({"idle_held", "GPU-0", -5, 1});
            }).find("finding"),
            std::string::npos);
  EXPECT_NE(problem([](JobUsage& u) { u.id = "\x1b[2J", u.start = -1; }).find("job \\x1b[2J"),
            std::string::npos);
}

// A value that slipped through prints as invalid, never as a wrapped number.
TEST(JobReport, ImpossibleValuesPrintAsInvalid) {
  JobUsage u = BusyJob(1);
  u.start = -6.9e15;
  u.end = std::nan("");
  u.devices[0].idle_held_seconds = 9.3e18;
  const std::string table = ReportTable(BuildReport(u, {}));
  EXPECT_NE(table.find("from invalid time, ended invalid time"), std::string::npos) << table;
  EXPECT_NE(table.find("invalid"), std::string::npos) << table;
  EXPECT_EQ(table.find("-9223372036854775808"), std::string::npos) << table;
  EXPECT_EQ(table.find("-219246529"), std::string::npos) << table;
}

// Text from the source (ids, host names, reasons in notes) cannot drive the
// terminal: the human formats replace control characters, JSON is ASCII.
TEST(JobReport, SourceTextCannotDriveTheTerminal) {
  JobUsage u = BusyJob(2);
  u.id = "4242\x1b]0;owned\x07\nfake line";
  u.devices[0].hostname = std::string("node\x1b[2J\xc2\x9b") + "31m";  // ESC, then C1 CSI
  u.devices[1].busy_seconds = 0;  // gpus_unused quotes the host name
  u.devices[1].hostname = "evil\x1b[1A";
  u.findings.push_back({"idle\x1b[5m", "GPU-0\r", 1200, 1300});
  const Report r = BuildReport(u, {"agent http://x", 1, {}});
  for (const std::string& text : {ReportTable(r), ReportMarkdown(r), TenantsTable({r}, false),
                                  TenantsTable({r}, true), ReportJson(r), TenantsJson({r})}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
    EXPECT_EQ(text.find("\nfake line"), std::string::npos) << text;
  }
  EXPECT_NE(ReportTable(r).find("node\xef\xbf\xbd[2J"), std::string::npos) << ReportTable(r);
  const nlohmann::json json = nlohmann::json::parse(ReportJson(r));
  EXPECT_EQ(json["job"], "job " + u.id);  // the data itself unchanged, only escaped
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
