#include <gtest/gtest.h>

#include <sstream>

#include "cli/commands.h"
#include "cli/query_command.h"
#include "cli/query_help.h"
#include "cli/summary.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

QueryPlan Plan(std::vector<std::string> args) {
  Result<QueryArgs> parsed = ParseQueryArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  Result<QueryPlan> plan = PlanQuery(*parsed);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

// A source that hands out snapshots whose GPU 0 utilization counts samples.
struct CountingSource {
  int calls = 0;
  Result<SnapshotPtr> operator()() {
    auto snap = std::make_shared<Snapshot>(testing::TwoGpuSnapshot());
    snap->samples[0].Set(Metric::kGpuUtil, ++calls);
    return SnapshotPtr(snap);
  }
};

TEST(QueryLoopTest, HeaderOnceThenOneBlockPerSample) {
  QueryPlan plan = Plan({"--query-gpu=index,utilization.gpu", "--format=csv", "-lms", "10"});
  CountingSource source;
  int waits = 0;
  std::ostringstream out;
  Status status = RunQueryLoop(
      plan, std::ref(source), [&waits](auto) { return ++waits < 3; }, out);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(source.calls, 3);
  EXPECT_EQ(out.str(),
            "index, utilization.gpu [%]\n"
            "0, 1 %\n1, 100 %\n"
            "0, 2 %\n1, 100 %\n"
            "0, 3 %\n1, 100 %\n");
}

TEST(QueryLoopTest, OneShotDoesNotWait) {
  QueryPlan plan = Plan({"--query-gpu=index", "--format=csv,noheader", "-i", "1"});
  CountingSource source;
  std::ostringstream out;
  bool waited = false;
  ASSERT_TRUE(RunQueryLoop(
                  plan, std::ref(source), [&waited](auto) { return waited = true; }, out)
                  .ok());
  EXPECT_FALSE(waited);
  EXPECT_EQ(out.str(), "1\n");
}

TEST(QueryLoopTest, SampleErrorsAndUnknownIdsStopTheLoop) {
  QueryPlan plan = Plan({"--query-gpu=index", "-l", "1"});
  std::ostringstream out;
  Status failed = RunQueryLoop(
      plan, [] { return Result<SnapshotPtr>(Status::Unavailable("GPU is lost")); },
      [](auto) { return true; }, out);
  EXPECT_EQ(failed.code(), Status::Code::kUnavailable);
  QueryPlan missing = Plan({"--query-gpu=index", "-i", "7"});
  CountingSource source;
  EXPECT_EQ(RunQueryLoop(
                missing, std::ref(source), [](auto) { return true; }, out)
                .code(),
            Status::Code::kNotFound);
}

TEST(QueryLoopTest, ComputeApps) {
  QueryPlan plan = Plan({"--query-compute-apps=pid,used_gpu_memory", "--format=csv,nounits"});
  CountingSource source;
  std::ostringstream out;
  ASSERT_TRUE(RunQueryLoop(
                  plan, std::ref(source), [](auto) { return true; }, out)
                  .ok());
  EXPECT_EQ(out.str(), "pid, used_gpu_memory [MiB]\n4242, 1024\n4343, [N/A]\n");
}

TEST(QueryCommandTest, UnknownFieldFailsBeforeLoadingNvml) {
  Invocation inv;
  inv.args = {"--query-gpu=index,nope"};
  inv.common.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  std::ostringstream out;
  inv.out = &out;
  Status status = RunQuery(inv);
  EXPECT_EQ(status.message(), "Field \"nope\" is not a valid field to query.");
  EXPECT_EQ(ExitCodeFor(status), 2);
  EXPECT_EQ(out.str(), "");
}

TEST(QueryCommandTest, HelpListsFields) {
  Invocation inv;
  inv.args = {"--help-query-gpu"};
  std::ostringstream out;
  inv.out = &out;
  ASSERT_TRUE(RunQuery(inv).ok());
  // nvidia-smi's layout: the field quoted, with its aliases, then what it is.
  EXPECT_EQ(
      out.str().rfind("List of valid properties to query for the switch \"--query-gpu=\":\n", 0),
      0u);
  EXPECT_NE(out.str().find("\n\"name\" or \"gpu_name\"\nProduct name of the GPU"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("\n\"clocks_event_reasons.sw_power_cap\" or "
                           "\"clocks_throttle_reasons.sw_power_cap\"\n"),
            std::string::npos);
  EXPECT_NE(out.str().find("\n\"utilization.gpu\"\nShare of the last sample period"),
            std::string::npos);
  EXPECT_NE(out.str().find("\n\"ecc.errors.corrected.volatile.dram\"\nSingle-bit (corrected) "
                           "ECC errors in dram, since the driver was last loaded."),
            std::string::npos);
}

// Every field and every compute-apps field says what it is.
TEST(QueryCommandTest, EveryFieldHasADescription) {
  for (const GpuField& field : GpuFields()) {
    EXPECT_FALSE(GpuFieldDescription(field).empty()) << field.name;
  }
  for (const AppField& field : AppFields()) {
    EXPECT_FALSE(AppFieldDescription(field).empty()) << field.name;
  }
  Invocation inv;
  inv.args = {"--help-query-compute-apps"};
  std::ostringstream out;
  inv.out = &out;
  ASSERT_TRUE(RunQuery(inv).ok());
  EXPECT_NE(out.str().find("\n\"process_name\" or \"name\"\nName of the process"),
            std::string::npos)
      << out.str();
}

TEST(SummaryTest, TableOfGpusAndProcesses) {
  Snapshot snap = testing::TwoGpuSnapshot();
  std::string text = FormatSummary(snap, {true, "training-8xh100"});
  EXPECT_NE(text.find("Driver Version: 570.133.20"), std::string::npos);
  EXPECT_NE(text.find("CUDA Version: 12.8"), std::string::npos);
  EXPECT_NE(text.find("simulated node (scenario training-8xh100)\n"), std::string::npos);
  EXPECT_NE(text.find("  0  NVIDIA H100 80GB HBM3  00000000:18:00.0    56C    P0   123W / 700W "
                      "    1234MiB / 81559MiB     45%\n"),
            std::string::npos)
      << text;
  // GPU 1 lacks temperature and power: N/A, not 0.
  EXPECT_NE(text.find("  1  NVIDIA H100 80GB HBM3  00000000:2A:00.0    N/A    P0    N/A / 700W"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("4242"), std::string::npos);
  EXPECT_NE(text.find("python3"), std::string::npos);
  EXPECT_EQ(FormatSummary(snap, {}).find("simulated"), std::string::npos);
}

TEST(SummaryTest, LostGpuSaysSo) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.samples[1].state = GpuState::kLost;
  snap.samples[1].state_reason = "fell off the bus";
  std::string text = FormatSummary(snap, {});
  EXPECT_NE(text.find("GPU is lost: fell off the bus"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuscope::cli
