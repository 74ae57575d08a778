// nvidia-smi habits: `gpuscope -L` lists GPUs and MIG devices as
// `nvidia-smi -L` does, and `gpuscope help COMMAND` is that command's --help.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/list_command.h"
#include "cli/summary.h"
#include "cli/top_frame.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

struct Ran {
  Status status;
  std::string out;
};

Ran RunArgs(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Result<Invocation> inv = ParseCommandLine(args);
  if (!inv.ok()) return {inv.status(), ""};
  inv->out = &out;
  inv->err = &err;
  Status status = FindCommand(inv->command)->run(*inv);
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  unsetenv("GPUSCOPE_SIM_START_TIME");
  return {status, out.str()};
}

TEST(CliList, FormatsAsNvidiaSmi) {
  Snapshot snap = testing::TwoGpuSnapshot();
  GpuInfo mig = snap.gpus[1];
  mig.gpu_instance_id = 1;
  mig.mig_profile = "3g.40gb";
  mig.mig_uuid = "MIG-11111111-2222-3333-4444-555555555555";
  snap.gpus.push_back(mig);
  mig.gpu_instance_id = 7;
  mig.mig_profile = "1g.10gb";
  mig.mig_uuid = "MIG-66666666-2222-3333-4444-555555555555";
  snap.gpus.push_back(mig);
  EXPECT_EQ(FormatGpuList(snap),
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-00000001-1111-2222-3333-444444444444)\n"
            "  MIG 3g.40gb     Device  0: (UUID: MIG-11111111-2222-3333-4444-555555555555)\n"
            "  MIG 1g.10gb     Device  1: (UUID: MIG-66666666-2222-3333-4444-555555555555)\n");
}

// An agent run with -d i (MIG instances only) has no entry for the GPUs: each
// is listed from its first instance, which carries its index, name and UUID,
// and no view says "No GPUs were found" above instances it shows (before:
// -L printed nothing, the summary and top both).
TEST(CliList, InstancesAloneStillNameTheirGpus) {
  Snapshot snap = testing::TwoGpuSnapshot();
  for (GpuInfo& mig : snap.gpus) {
    mig.gpu_instance_id = 1;
    mig.mig_profile = "7g.80gb";
    mig.mig_uuid = "MIG-1111111" + std::to_string(mig.index) + "-2222-3333-4444-555555555555";
  }
  EXPECT_EQ(FormatGpuList(snap),
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"
            "  MIG 7g.80gb     Device  0: (UUID: MIG-11111110-2222-3333-4444-555555555555)\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-00000001-1111-2222-3333-444444444444)\n"
            "  MIG 7g.80gb     Device  0: (UUID: MIG-11111111-2222-3333-4444-555555555555)\n");
  EXPECT_THAT(FormatSummary(snap, {}), ::testing::Not(HasSubstr("No GPUs were found")));
  EXPECT_THAT(RenderFrame(snap, {}), ::testing::Not(HasSubstr("No GPUs were found")));
  snap.gpus.clear();
  snap.samples.clear();
  EXPECT_THAT(FormatSummary(snap, {}), HasSubstr("No GPUs were found"));
}

TEST(CliList, DashLAndListGpusRunList) {
  EXPECT_EQ(ParseCommandLine({"-L"})->command, "list");
  EXPECT_EQ(ParseCommandLine({"--list-gpus", "--simulate", "mixed-node"})->command, "list");
  EXPECT_EQ(ParseCommandLine({"list"})->command, "list");
}

TEST(CliList, ListsTheSimulatedMixedNode) {
  Ran ran = RunArgs({"-L", "--simulate", "mixed-node"});
  ASSERT_TRUE(ran.status.ok()) << ran.status.message();
  std::istringstream lines(ran.out);
  std::string line;
  int gpus = 0, migs = 0;
  while (std::getline(lines, line)) {
    if (line.starts_with("GPU ")) {
      EXPECT_THAT(line, MatchesRegex("GPU [0-7]: NVIDIA .* \\(UUID: GPU-[0-9a-f-]+\\)"));
      ++gpus;
    } else {
      EXPECT_THAT(line, MatchesRegex("  MIG [0-9]g\\.[0-9]+gb +Device  [0-2]: "
                                     "\\(UUID: MIG-[0-9a-f-]+\\)"));
      ++migs;
    }
  }
  EXPECT_EQ(gpus, 8);
  EXPECT_EQ(migs, 3);
  EXPECT_THAT(ran.out, HasSubstr("GPU 7: NVIDIA H100 80GB HBM3 (UUID: GPU-"));
  EXPECT_THAT(ran.out, HasSubstr("\n  MIG 3g.40gb     Device  0: (UUID: MIG-"));
}

// The GPU that fell off the bus fails the command, after the others.
TEST(CliList, LostGpuFails) {
  Ran ran = RunArgs({"-L", "--simulate", "fault-drill"});
  // Exit 15 as every command (it was 21, "unreachable", before).
  EXPECT_EQ(ExitFor(ran.status), Exit::kGpuLost) << ran.status.message();
  EXPECT_THAT(ran.status.message(), ContainsRegex("GPU 3 (\\([0-9A-F:.]+\\) )?is lost"));
  EXPECT_THAT(ran.out, HasSubstr("GPU 7: NVIDIA H100 80GB HBM3 (UUID: GPU-"));
}

TEST(CliHelpCommand, ShowsTheCommandsHelp) {
  Ran query = RunArgs({"help", "query"});
  ASSERT_TRUE(query.status.ok()) << query.status.message();
  EXPECT_THAT(query.out, HasSubstr("Usage: gpuscope query"));
  Ran top = RunArgs({"help", "top"});
  EXPECT_THAT(top.out, HasSubstr("Usage: gpuscope top"));
  Ran list = RunArgs({"help", "list"});
  EXPECT_THAT(list.out, HasSubstr("Usage: gpuscope -L"));
  // Every command answers `help COMMAND` (version took no arguments at all).
  for (const Command& command : Commands()) {
    if (command.name.empty() || command.name == "help") continue;
    Ran help = RunArgs({"help", std::string(command.name)});
    EXPECT_TRUE(help.status.ok()) << command.name << ": " << help.status.message();
    EXPECT_THAT(help.out, HasSubstr("Usage: gpuscope")) << command.name;
  }
  Ran all = RunArgs({"help"});
  EXPECT_THAT(all.out, HasSubstr("Commands:"));
  Ran unknown = RunArgs({"help", "qeury"});
  EXPECT_EQ(unknown.status.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(unknown.status.message(), HasSubstr("\"qeury\""));
}

}  // namespace
}  // namespace gpuscope::cli
