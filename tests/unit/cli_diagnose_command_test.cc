// `gpuscope diagnose`: argument parsing, the simulator start time, the docs
// command, and one offline run on a diagnosis scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/diagnose_command.h"
#include "cli/docs_command.h"
#include "cli/serve.h"
#include "export/metrics_doc.h"
#include "test_paths.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CliDiagnoseArgs, ParsesWindowIdsAndJson) {
  Result<DiagnoseArgs> a = ParseDiagnoseArgs({"--window", "2m", "-i", "1", "--json"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_DOUBLE_EQ(a->window_seconds, 120);
  EXPECT_EQ(a->ids, "1");
  EXPECT_TRUE(a->json);
  Result<DiagnoseArgs> b = ParseDiagnoseArgs({"--window=90s", "--id=GPU-x"});
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->window_seconds, 90);
  EXPECT_EQ(b->ids, "GPU-x");
  Result<DiagnoseArgs> d = ParseDiagnoseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->window_seconds, 300);
  EXPECT_FALSE(d->json);
  EXPECT_FALSE(d->live);
  Result<DiagnoseArgs> live = ParseDiagnoseArgs({"--live"});
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live->live);
  EXPECT_FALSE(ParseDiagnoseArgs({"--live=yes"}).ok());
}

TEST(CliDiagnoseArgs, RejectsBadInput) {
  Result<DiagnoseArgs> bad = ParseDiagnoseArgs({"--window", "5 minutes"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("5 minutes"));
  EXPECT_FALSE(ParseDiagnoseArgs({"--window", "0"}).ok());
  EXPECT_FALSE(ParseDiagnoseArgs({"--window"}).ok());
  EXPECT_FALSE(ParseDiagnoseArgs({"--verbose"}).ok());
}

TEST(CliDiagnoseArgs, AgentTakesTlsAndAuthButNoWindow) {
  Result<DiagnoseArgs> a =
      ParseDiagnoseArgs({"--agent", "https://node:9400", "--ca-file", "ca.pem", "--basic-auth-user",
                         "ops", "--basic-auth-password-file", "pw", "-i", "2", "--json"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->agent.url, "https://node:9400");
  EXPECT_EQ(a->agent.ca_file, "ca.pem");
  EXPECT_EQ(a->agent.username, "ops");
  EXPECT_EQ(a->agent.password_file, "pw");
  EXPECT_EQ(a->ids, "2");
  EXPECT_TRUE(a->json);
  Result<DiagnoseArgs> window = ParseDiagnoseArgs({"--agent", "http://x:9400", "--window", "1m"});
  ASSERT_FALSE(window.ok());
  EXPECT_THAT(window.status().message(), HasSubstr("--window does not go with --agent"));
  EXPECT_FALSE(ParseDiagnoseArgs({"--agent", "http://x:9400", "--live"}).ok());
  Result<DiagnoseArgs> stray = ParseDiagnoseArgs({"--ca-file", "ca.pem"});
  ASSERT_FALSE(stray.ok());
  EXPECT_THAT(stray.status().message(), HasSubstr("go with --agent"));
}

TEST(CliDiagnoseRun, AgentUrlMustBeHttp) {
  std::ostringstream out, err;
  Invocation inv;
  inv.command = "diagnose";
  inv.args = {"--agent", "ftp://node"};
  inv.out = &out, inv.err = &err;
  Status s = RunDiagnose(inv);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("--agent ftp://node: want an http:// or https:// URL"));
}

// Offline, the window ending at GPUSCOPE_SIM_START_TIME (the scenario moment,
// cli/sim_clock.h): the memory leak of classic-memory-oom is found, and -i
// keeps only the asked GPU (an unknown one is an error).
TEST(CliDiagnoseRun, OfflineOnTheSimulator) {
  const std::string scenario =
      test_support::SourceDir() + "/sim/scenarios/diagnosis/classic-memory-oom.yaml";
  std::ostringstream out, err;
  Result<Invocation> inv =
      ParseCommandLine({"diagnose", "--simulate", scenario, "--window", "2m", "-i", "0", "--json"});
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  inv->out = &out;
  inv->err = &err;
  setenv("GPUSCOPE_SIM_START_TIME", "180", 1);  // window [60, 180]
  Status status = RunDiagnose(*inv);
  ASSERT_TRUE(status.ok()) << status.message();
  nlohmann::json doc = nlohmann::json::parse(out.str());
  ASSERT_EQ(doc["gpus"].size(), 1u);
  EXPECT_NEAR(doc["gpus"][0]["window_seconds"].get<double>(), 120, 1.5);
  bool capacity = false;
  for (const auto& f : doc["gpus"][0]["findings"]) capacity |= f["kind"] == "memory_capacity";
  EXPECT_TRUE(capacity) << out.str();

  Result<Invocation> missing =
      ParseCommandLine({"diagnose", "--simulate", scenario, "--window", "1m", "-i", "7"});
  ASSERT_TRUE(missing.ok());
  missing->out = &out;
  missing->err = &err;
  Status not_found = RunDiagnose(*missing);
  unsetenv("GPUSCOPE_SIM_START_TIME");
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  EXPECT_EQ(not_found.code(), Status::Code::kNotFound) << not_found.message();
}

// On the simulator a finding's "since" is a moment of the scenario clock
// (--at, GPUSCOPE_SIM_START_TIME), in the text and the JSON: never a 1970 date.
TEST(CliDiagnoseRun, SinceIsOnTheScenarioClock) {
  const std::string scenario =
      test_support::SourceDir() + "/sim/scenarios/diagnosis/classic-memory-oom.yaml";
  setenv("GPUSCOPE_SIM_START_TIME", "180", 1);  // window [60, 180]
  std::string outputs[2];
  for (int json = 0; json < 2; ++json) {
    std::vector<std::string> args = {"diagnose", "--simulate", scenario, "--window",
                                     "2m",       "-i",         "0"};
    if (json) args.push_back("--json");
    Result<Invocation> inv = ParseCommandLine(args);
    ASSERT_TRUE(inv.ok()) << inv.status().message();
    std::ostringstream out, err;
    inv->out = &out;
    inv->err = &err;
    Status status = RunDiagnose(*inv);
    ASSERT_TRUE(status.ok()) << status.message();
    outputs[json] = out.str();
  }
  unsetenv("GPUSCOPE_SIM_START_TIME");
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  EXPECT_THAT(outputs[0], Not(HasSubstr("1970"))) << outputs[0];
  EXPECT_THAT(outputs[0], HasSubstr("since: 1m00s into the scenario, the window's start"));
  nlohmann::json doc = nlohmann::json::parse(outputs[1]);
  ASSERT_FALSE(doc["gpus"][0]["findings"].empty());
  for (const auto& f : doc["gpus"][0]["findings"]) {
    EXPECT_EQ(f["clock"], "scenario") << f.dump();
    EXPECT_GE(f["since"].get<double>(), 59);
    EXPECT_LE(f["since"].get<double>(), 181);
  }
}

TEST(CliDocs, PrintsTheGeneratedDocuments) {
  EXPECT_EQ(*GeneratedDoc("metrics"), prom::RenderMetricsDoc());
  EXPECT_EQ(*GeneratedDoc("configuration"), ConfigurationDoc());
  Result<std::string> unknown = GeneratedDoc("readme");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("readme"));
  std::ostringstream out, err;
  Result<Invocation> inv = ParseCommandLine({"docs", "configuration"});
  ASSERT_TRUE(inv.ok());
  inv->out = &out;
  inv->err = &err;
  ASSERT_TRUE(RunDocs(*inv).ok());
  EXPECT_EQ(out.str(), ConfigurationDoc());
}

}  // namespace
}  // namespace gpuscope::cli
