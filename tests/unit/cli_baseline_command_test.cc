// `gpuscope baseline`: argument parsing of both forms, and `rules` output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cli/baseline_command.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;

TEST(CliBaselineArgs, ReportNeedsPrometheusAndTakesClientOptions) {
  EXPECT_THAT(ParseBaselineArgs({}).status().message(), HasSubstr("--prometheus URL"));
  Result<BaselineArgs> a = ParseBaselineArgs(
      {"--prometheus", "https://p:9090", "--json", "--ca-file=ca.pem", "--basic-auth-user", "u",
       "--basic-auth-password-file", "pw", "--window", "28d", "--workload", "trainer"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->rules);
  EXPECT_TRUE(a->json);
  EXPECT_EQ(a->client.url, "https://p:9090");
  EXPECT_EQ(a->client.ca_file, "ca.pem");
  EXPECT_EQ(a->client.username, "u");
  EXPECT_EQ(a->client.password_file, "pw");
  EXPECT_EQ(a->report.window_days, 28);
  EXPECT_EQ(a->report.workload, "trainer");
  EXPECT_THAT(ParseBaselineArgs({"--prometheus", "http://p", "--warmup", "3d"}).status().message(),
              HasSubstr("Unknown option"));
}

TEST(CliBaselineArgs, RulesForm) {
  Result<BaselineArgs> a =
      ParseBaselineArgs({"rules", "--no-default-signals", "--signal", "qps:falling:1:rate(x[5m])",
                         "--window", "21d", "--warmup", "5d", "--k", "2.5", "--sustain", "30m"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(a->rules);
  ASSERT_EQ(a->rule.signals.size(), 1u);
  EXPECT_EQ(a->rule.signals[0].name, "qps");
  EXPECT_EQ(a->rule.window_days, 21);
  EXPECT_EQ(a->rule.warmup_days, 5);
  EXPECT_DOUBLE_EQ(a->rule.k, 2.5);
  EXPECT_EQ(a->rule.sustain_minutes, 30);
  EXPECT_THAT(ParseBaselineArgs({"rules", "--window", "36h"}).status().message(),
              HasSubstr("whole days"));
  EXPECT_THAT(ParseBaselineArgs({"rules", "--k", "-1"}).status().message(), HasSubstr("> 0"));
  EXPECT_THAT(ParseBaselineArgs({"rules", "--json"}).status().message(),
              HasSubstr("Unknown option"));
}

TEST(CliBaseline, RulesPrintsYaml) {
  Invocation inv;
  std::ostringstream out, err;
  inv.out = &out;
  inv.err = &err;
  inv.args = {"rules", "--signal", "qps:falling:1:rate(x{workload!=\"\"}[5m])"};
  ASSERT_TRUE(RunBaseline(inv).ok());
  EXPECT_THAT(out.str(), HasSubstr("- name: gpuscope-baselines-5m"));
  EXPECT_THAT(out.str(), HasSubstr("alert: GpuWorkloadQpsBelowBaseline"));
  inv.args = {"rules", "--warmup", "20d"};
  Status s = RunBaseline(inv);
  EXPECT_THAT(s.message(), HasSubstr("warm-up"));
}

}  // namespace
}  // namespace gpuscope::cli
