// One clock on the simulator (cli/sim_clock.h): --at and GPUSCOPE_SIM_START_TIME
// parse with errors that name them, and by default every command evaluates a
// scenario at the same settled moment, so `health` and `diagnose` agree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/diagnose_command.h"
#include "cli/exit_codes.h"
#include "cli/health_command.h"
#include "cli/serve_config.h"
#include "cli/settings.h"
#include "cli/sim_clock.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;

TEST(CliSimClock, ParsesAt) {
  EXPECT_EQ(*ParseAt("0"), 0);
  EXPECT_EQ(*ParseAt("90s"), 90);
  EXPECT_EQ(*ParseAt("5m"), 300);
  EXPECT_EQ(*ParseAt("1h30m"), 5400);
  Result<double> bad = ParseAt("soon");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--at: 'soon' is not a duration"));
}

TEST(CliSimClock, ParsesTheStartTimeVariable) {
  EXPECT_EQ(*ParseSimStartTime(nullptr), 0);
  EXPECT_EQ(*ParseSimStartTime(""), 0);
  EXPECT_EQ(*ParseSimStartTime("120.5"), 120.5);
  Result<double> bad = ParseSimStartTime("soon");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("GPUSCOPE_SIM_START_TIME"));
  EXPECT_FALSE(ParseSimStartTime("-5").ok());
}

TEST(CliSimClock, AtIsACommonOption) {
  Result<Invocation> inv = ParseCommandLine({"health", "--at=90s", "--json"});
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(inv->common.at_seconds, 90);
  EXPECT_EQ(inv->args, std::vector<std::string>{"--json"});
  Result<Invocation> bad = ParseCommandLine({"health", "--at", "-1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--at"));
}

TEST(CliSimClock, SettledMomentLeavesAWholeDiagnoseWindow) {
  EXPECT_EQ(SettledMoment(0), 300);
  EXPECT_EQ(SettledMoment(5), 305);
  EXPECT_EQ(DescribeMoment(305), "5m05s");
  EXPECT_EQ(DescribeMoment(42.4), "42s");
}

// Runs a command in this process; returns its Status and output.
struct Ran {
  Status status;
  int exit_code = 0;
  std::string out, err;
};

Ran RunCommand(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Ran ran;
  Result<Invocation> inv = ParseCommandLine(args);
  if (!inv.ok()) {
    ran.status = inv.status();
    return ran;
  }
  inv->out = &out;
  inv->err = &err;
  ran.status = FindCommand(inv->command)->run(*inv);
  ran.exit_code = inv->exit_code;
  ran.out = out.str();
  ran.err = err.str();
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  return ran;
}

class CliSimClockRun : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("GPUSCOPE_SIM_START_TIME"); }
  void TearDown() override { unsetenv("GPUSCOPE_SIM_START_TIME"); }
};

// fault-drill loses GPU 3 at 5 s: by default health sees it (it used to say
// OK and exit 0, sampling at 0 s); --at 0 shows the node before the fault.
TEST_F(CliSimClockRun, HealthSeesTheFaultDrillsFault) {
  Ran settled = RunCommand({"health", "--simulate", "fault-drill", "--json"});
  ASSERT_TRUE(settled.status.ok()) << settled.status.message();
  EXPECT_EQ(settled.exit_code, static_cast<int>(Exit::kGpuLost)) << settled.out;
  nlohmann::json doc = nlohmann::json::parse(settled.out);
  EXPECT_EQ(doc["gpus"][3]["lost"], true);
  EXPECT_EQ(doc["gpus"][3]["verdict"], "fail");

  Ran before = RunCommand({"health", "--simulate", "fault-drill", "--at", "0", "--json"});
  ASSERT_TRUE(before.status.ok()) << before.status.message();
  EXPECT_EQ(before.exit_code, 0) << before.out;
}

// mixed-node's GPU 6 lost its cooling at 0 s: health and diagnose (its window
// ending at the same moment) both see it throttling. health used to call it
// fine at 63 C while diagnose --window 2m found 93 C.
TEST_F(CliSimClockRun, HealthAndDiagnoseAgreeOnMixedNodeGpu6) {
  Ran health = RunCommand({"health", "--simulate", "mixed-node", "-i", "6", "--json"});
  ASSERT_TRUE(health.status.ok()) << health.status.message();
  nlohmann::json doc = nlohmann::json::parse(health.out);
  ASSERT_EQ(doc["gpus"].size(), 1u);
  EXPECT_NE(doc["gpus"][0]["checks"]["thermal"]["verdict"], "ok") << health.out;
  EXPECT_THAT(health.out, HasSubstr("thermal slowdown active"));

  Ran diagnose =
      RunCommand({"diagnose", "--simulate", "mixed-node", "--window", "2m", "-i", "6", "--json"});
  ASSERT_TRUE(diagnose.status.ok()) << diagnose.status.message();
  EXPECT_THAT(diagnose.out, HasSubstr("\"thermal_throttle\""));
}

// Explicit moments win: the variable over the default, --at over both; --at
// needs a scenario.
TEST_F(CliSimClockRun, AtAndTheVariableChooseTheMoment) {
  setenv("GPUSCOPE_SIM_START_TIME", "1", 1);
  Ran early = RunCommand({"health", "--simulate", "fault-drill", "--json"});
  EXPECT_EQ(early.exit_code, 0) << early.out;
  Ran at = RunCommand({"health", "--simulate", "fault-drill", "--at", "10s", "--json"});
  EXPECT_EQ(at.exit_code, static_cast<int>(Exit::kGpuLost)) << at.out;

  unsetenv("GPUSCOPE_SIM_START_TIME");
  Ran no_scenario =
      RunCommand({"health", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--at", "10s"});
  EXPECT_EQ(no_scenario.status.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(no_scenario.status.message(), HasSubstr("--at"));
}

// serve takes --at as a setting (it plays the scenario from 0 without it);
// from the environment the simulator reads GPUSCOPE_SIM_START_TIME itself.
TEST(CliSimClockServe, AtIsAServeSetting) {
  auto lookup = [](const char*) -> const char* { return nullptr; };
  const std::vector<std::string> with_at = {"--simulate", "fault-drill", "--at", "5m"};
  const std::vector<std::string> bad_at = {"--at", "soon"};
  const std::vector<std::string> without = {};
  Result<Settings> flag = ResolveSettings(kServeSettings, with_at, lookup, "", "");
  ASSERT_TRUE(flag.ok()) << flag.status().message();
  Result<ServeConfig> config = BuildServeConfig(*flag);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->nvml.at_seconds, 300);
  Result<Settings> bad = ResolveSettings(kServeSettings, bad_at, lookup, "", "");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(BuildServeConfig(*bad).ok());
  Result<Settings> none = ResolveSettings(kServeSettings, without, lookup, "", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(BuildServeConfig(*none)->nvml.at_seconds.has_value());
}

TEST(CliSimClockHelp, EveryCommandThatReadsTheSimulatorShowsAt) {
  for (const std::string command : {"health", "diagnose", "top", "query"}) {
    Ran help = RunCommand({command, "--help"});
    ASSERT_TRUE(help.status.ok()) << command;
    EXPECT_THAT(help.out, HasSubstr("--at DURATION")) << command;
    EXPECT_THAT(help.out, HasSubstr("GPUSCOPE_SIM_START_TIME")) << command;
  }
  Ran usage = RunCommand({"--help"});
  EXPECT_THAT(usage.out, HasSubstr("--at DURATION"));
}

}  // namespace
}  // namespace gpuscope::cli
