// `gpuscope health`: argument parsing, what is printed where and the exit
// code for each verdict, and one end-to-end run on the simulator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/health_command.h"
#include "test_paths.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;

HealthArgs Parse(std::vector<std::string> args) {
  Result<HealthArgs> parsed = ParseHealthArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? *parsed : HealthArgs{};
}

health::HealthReport ReportWith(health::Verdict verdict) {
  health::HealthReport report;
  report.hostname = "node1";
  health::GpuHealth gpu;
  gpu.gpu = 0;
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.verdict = verdict;
  report.gpus.push_back(gpu);
  report.verdict = verdict;
  return report;
}

TEST(CliHealthArgs, ParsesEveryOption) {
  HealthArgs a = Parse({"--json", "--strict", "--watch", "30", "-v", "-i", "0,2"});
  EXPECT_TRUE(a.json);
  EXPECT_TRUE(a.strict);
  EXPECT_TRUE(a.verbose);
  EXPECT_DOUBLE_EQ(a.watch_seconds, 30);
  EXPECT_EQ(a.ids, "0,2");
  HealthArgs b = Parse({"--watch=1m", "--id=GPU-abc", "--verbose"});
  EXPECT_DOUBLE_EQ(b.watch_seconds, 60);
  EXPECT_EQ(b.ids, "GPU-abc");
  EXPECT_TRUE(Parse({"--help"}).help);
  HealthArgs none = Parse({});
  EXPECT_FALSE(none.json || none.strict || none.verbose || none.help);
  EXPECT_EQ(none.watch_seconds, 0);
}

TEST(CliHealthArgs, RejectsBadInput) {
  Result<HealthArgs> unknown = ParseHealthArgs({"--frobnicate"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("--frobnicate"));
  EXPECT_EQ(ParseHealthArgs({"--watch"}).status().code(), Status::Code::kInvalidArgument);
  Result<HealthArgs> bad = ParseHealthArgs({"--watch", "soon"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("soon"));
  EXPECT_FALSE(ParseHealthArgs({"-i"}).ok());
  EXPECT_FALSE(ParseHealthArgs({"--json=yes"}).ok());
}

TEST(CliHealthPrint, ExitCodeFollowsTheVerdict) {
  std::ostringstream out, err;
  EXPECT_EQ(PrintHealth({}, ReportWith(health::Verdict::kOk), out, err), 0);
  EXPECT_EQ(PrintHealth({}, ReportWith(health::Verdict::kWarn), out, err), 0);
  EXPECT_EQ(PrintHealth({}, ReportWith(health::Verdict::kFail), out, err), 20);
  HealthArgs strict;
  strict.strict = true;
  EXPECT_EQ(PrintHealth(strict, ReportWith(health::Verdict::kWarn), out, err), 1);
  EXPECT_EQ(PrintHealth(strict, ReportWith(health::Verdict::kOk), out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("node1: FAIL"));
  EXPECT_EQ(err.str(), "");
}

TEST(CliHealthPrint, NvmlDownIsOneSentenceOnStderr) {
  health::HealthReport report;
  report.nvml_up = false;
  report.nvml_error = "NVIDIA driver library /nonexistent not found";
  report.verdict = health::Verdict::kFail;
  std::ostringstream out, err;
  EXPECT_EQ(PrintHealth({}, report, out, err), 9);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(),
            "gpuscope health: cannot read the GPUs: NVIDIA driver library /nonexistent not "
            "found\n");
  // Scripts asking for JSON still get a document.
  HealthArgs json;
  json.json = true;
  std::ostringstream jout, jerr;
  EXPECT_EQ(PrintHealth(json, report, jout, jerr), 9);
  nlohmann::json doc = nlohmann::json::parse(jout.str());
  EXPECT_EQ(doc["nvml_up"], false);
  EXPECT_THAT(doc["nvml_error"].get<std::string>(), HasSubstr("/nonexistent"));
}

Invocation HealthInvocation(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  Result<Invocation> inv = ParseCommandLine(args);
  EXPECT_TRUE(inv.ok()) << inv.status().message();
  inv->out = &out;
  inv->err = &err;
  return *inv;
}

// A GPU lost since before the first sample fails the node with nvidia-smi's
// code for it (15), and says so in one sentence on stderr.
TEST(CliHealthRun, LostGpuOnTheSimulatorFails) {
  const std::string scenario = test_support::SourceDir() + "/sim/scenarios/health/xid-79-lost.yaml";
  setenv("GPUSCOPE_SIM_START_TIME", "20", 1);
  std::ostringstream out, err;
  Invocation inv = HealthInvocation({"health", "--simulate", scenario, "--json"}, out, err);
  Status status = RunHealth(inv);
  unsetenv("GPUSCOPE_SIM_START_TIME");
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(inv.exit_code, 15);
  EXPECT_THAT(err.str(), HasSubstr("gpuscope health: GPU 3 is lost"));
  EXPECT_THAT(err.str(), HasSubstr("is lost (NVML answers GPU_IS_LOST"));
  nlohmann::json doc = nlohmann::json::parse(out.str());
  ASSERT_EQ(doc["gpus"].size(), 4u);
  EXPECT_EQ(doc["gpus"][3]["verdict"], "fail");
  EXPECT_EQ(doc["gpus"][3]["lost"], true);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(doc["gpus"][i]["verdict"], "ok") << i;
}

TEST(CliHealthRun, MissingLibraryExitsNoDriverWithOneSentence) {
  std::ostringstream out, err;
  Invocation inv = HealthInvocation({"health", "--nvml-lib", "/nonexistent"}, out, err);
  ASSERT_TRUE(RunHealth(inv).ok());
  EXPECT_EQ(inv.exit_code, 9);
  EXPECT_EQ(out.str(), "");
  const std::string sentence = err.str();
  EXPECT_THAT(sentence, HasSubstr("/nonexistent not found"));
  EXPECT_EQ(std::count(sentence.begin(), sentence.end(), '\n'), 1);
}

// --agent takes the TLS and auth options, and --watch (the agent is asked again).
TEST(CliHealthArgs, AgentAndItsOptions) {
  HealthArgs a = Parse({"--agent", "https://node:9400", "--ca-file", "ca.pem", "-i", "0,1"});
  EXPECT_EQ(a.agent.url, "https://node:9400");
  EXPECT_EQ(a.agent.ca_file, "ca.pem");
  EXPECT_EQ(a.ids, "0,1");
  HealthArgs watch = Parse({"--agent", "http://x:9400", "--watch", "5", "--count", "2"});
  EXPECT_DOUBLE_EQ(watch.watch_seconds, 5);
  EXPECT_EQ(watch.count, 2);
  Result<HealthArgs> stray = ParseHealthArgs({"--ca-file", "ca.pem"});
  ASSERT_FALSE(stray.ok());
  EXPECT_THAT(stray.status().message(), HasSubstr("go with --agent"));
}

// Issue 44: `-i 9` exits 6 (not found) as in query, not 2 (a failed GPU, or a typo), with
// query's message and no report (a GPU that does not exist is not one that cannot be read).
TEST(CliHealthRun, NoSuchGpuExitsNotFound) {
  std::ostringstream out, err;
  Invocation inv =
      HealthInvocation({"health", "--simulate", "training-8xh100", "-i", "9"}, out, err);
  Status status = RunHealth(inv);
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(), "-i: no GPU matches id \"9\"");
  EXPECT_EQ(ExitCodeFor(status), 6);
  EXPECT_EQ(out.str(), "");
}

TEST(CliHealthArgs, CountGoesWithWatch) {
  EXPECT_EQ(Parse({"--watch", "5s", "--count", "2"}).count, 2);
  EXPECT_FALSE(ParseHealthArgs({"--count", "2"}).ok());
  EXPECT_FALSE(ParseHealthArgs({"--watch", "5s", "--count", "0"}).ok());
  Result<HealthArgs> big = ParseHealthArgs({"--watch", "100000"});
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("a bare number is seconds"));
}

}  // namespace
}  // namespace gpuscope::cli
