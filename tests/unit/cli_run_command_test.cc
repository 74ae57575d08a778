// `gpuscope run`'s arguments (cli/run_command.h), how it finds the command
// (cli/run_child.h), and the command line around it (cli/commands.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cli/commands.h"
#include "cli/run_child.h"
#include "cli/run_command.h"

namespace gpuscope::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RunArgs, OptionsThenTheCommandAfterDashDash) {
  auto args = ParseRunArgs({"--json", "--report", "r.json", "--interval", "500", "--", "python3",
                            "train.py", "--json", "--", "-x"});
  ASSERT_TRUE(args.ok()) << args.status().message();
  EXPECT_TRUE(args->json);
  EXPECT_EQ(args->report_file, "r.json");
  EXPECT_DOUBLE_EQ(args->interval_seconds, 0.5);  // bare numbers are ms, as serve's -c
  // Everything after `--` is the command's, options and `--` included.
  EXPECT_THAT(args->command, ElementsAre("python3", "train.py", "--json", "--", "-x"));
}

TEST(RunArgs, TheFirstWordStartsTheCommand) {
  auto args = ParseRunArgs({"--markdown", "--interval=2s", "./bench.sh", "--live"});
  ASSERT_TRUE(args.ok()) << args.status().message();
  EXPECT_TRUE(args->markdown);
  EXPECT_FALSE(args->live);
  EXPECT_DOUBLE_EQ(args->interval_seconds, 2);
  EXPECT_THAT(args->command, ElementsAre("./bench.sh", "--live"));
}

TEST(RunArgs, BadInputIsNamed) {
  auto status = [](std::vector<std::string> a) { return ParseRunArgs(a).status(); };
  EXPECT_THAT(status({}).message(), HasSubstr("no command to run"));
  EXPECT_THAT(status({"--json", "--"}).message(), HasSubstr("no command to run"));
  EXPECT_THAT(status({"--interval", "50ms", "--", "x"}).message(), HasSubstr("at least 100ms"));
  EXPECT_THAT(status({"--interval", "soon", "--", "x"}).message(), HasSubstr("--interval"));
  EXPECT_THAT(status({"--json", "--markdown", "--", "x"}).message(), HasSubstr("choose one"));
  EXPECT_THAT(status({"--agent", "http://x", "--", "x"}).message(), HasSubstr("--agent"));
  EXPECT_EQ(status({}).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(ParseRunArgs({"--help"})->help);
}

TEST(RunArgs, CommonOptionsStopAtDashDash) {
  auto inv = ParseCommandLine(
      {"run", "--simulate", "idle-node", "--", "tool", "--simulate", "mine", "--nvml-lib", "x"});
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(inv->command, "run");
  EXPECT_EQ(inv->common.simulate, "idle-node");
  EXPECT_TRUE(inv->common.nvml_lib.empty());
  EXPECT_THAT(inv->args, ElementsAre("--", "tool", "--simulate", "mine", "--nvml-lib", "x"));
}

TEST(ResolveCommand, AsAShellFindsIt) {
  EXPECT_EQ(ResolveCommand("sh", "/nonexistent:/bin:/usr/bin").path, "/bin/sh");
  Resolved missing = ResolveCommand("no-such-tool-xyz", "/bin:/usr/bin");
  EXPECT_EQ(missing.failure_status, 127);
  EXPECT_EQ(missing.error, "no-such-tool-xyz: command not found");
  const std::string data = ::testing::TempDir() + "/run-not-executable.txt";
  std::ofstream(data) << "not a program\n";
  chmod(data.c_str(), 0644);
  EXPECT_EQ(ResolveCommand(data, "/bin").failure_status, 126);    // not executable
  EXPECT_EQ(ResolveCommand("/bin", "/bin").failure_status, 126);  // a directory
  EXPECT_EQ(ResolveCommand("./no/such/file", "/bin").failure_status, 127);
  EXPECT_EQ(ResolveCommand("", "/bin").failure_status, 127);
}

}  // namespace
}  // namespace gpuscope::cli
