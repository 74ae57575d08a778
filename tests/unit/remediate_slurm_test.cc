// The Slurm actuator's parsing (remediate/slurm.h) and the command runner
// (remediate/command.h).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "remediate/command.h"
#include "remediate/slurm.h"

namespace gpuscope::remediate {
namespace {

constexpr char kSinfo[] =
    "n1|drained|(null)|gpuscope: XID 79 on GPU 3 (GPU-3) https://x/GpuFallenOffBus.md\n"
    "n1|drained|(null)|gpuscope: XID 79 on GPU 3 (GPU-3) https://x/GpuFallenOffBus.md\n"
    "n2|idle|gpuscope-no-remediate,a100|none\n"
    "n3|draining|(null)|bad|dimm by alice\n"
    "n4|mixed|(null)|none\n"
    "n5|idle+drain*|(null)|gpuscope: row remap failure on GPU 0 (GPU-0) u\n";

TEST(Sinfo, OurDrainCountsOnceAcrossPartitions) {
  NodeView v = ParseSinfo(kSinfo, "n1");
  EXPECT_TRUE(v.error.empty());
  EXPECT_TRUE(v.found);
  EXPECT_TRUE(v.drained);
  EXPECT_TRUE(IsOurReason(v.reason));
  EXPECT_FALSE(v.opted_out);
  EXPECT_EQ(v.nodes, 5);
  EXPECT_EQ(v.drained_by_us, 2);
}

TEST(Sinfo, OptOutFeatureAndAdminReasonWithBars) {
  EXPECT_TRUE(ParseSinfo(kSinfo, "n2").opted_out);
  EXPECT_FALSE(ParseSinfo(kSinfo, "n2").drained);
  NodeView n3 = ParseSinfo(kSinfo, "n3");
  EXPECT_TRUE(n3.drained);
  EXPECT_EQ(n3.reason, "bad|dimm by alice");
  EXPECT_FALSE(IsOurReason(n3.reason));
  NodeView n4 = ParseSinfo(kSinfo, "n4");
  EXPECT_FALSE(n4.drained);
  EXPECT_EQ(n4.reason, "");
  EXPECT_FALSE(ParseSinfo(kSinfo, "n9").found);
  EXPECT_FALSE(ParseSinfo("", "n1").found);
}

TEST(Command, CapturesOutputAndExitCode) {
  Result<CommandOutput> out = RunCommand({"sh", "-c", "echo hello; echo oops >&2; exit 3"}, 10);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_NE(out->output.find("hello"), std::string::npos);
  EXPECT_NE(out->output.find("oops"), std::string::npos);
}

TEST(Command, MissingProgramIsAClearError) {
  Result<CommandOutput> out = RunCommand({"gpuscope-no-such-scontrol", "update"}, 5);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "gpuscope-no-such-scontrol: not found in PATH");
}

TEST(Command, HungProgramIsKilledAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  Result<CommandOutput> out = RunCommand({"sleep", "30"}, 0.3);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("did not finish within 0.3 s"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// A fake sinfo/scontrol pair in a temp folder: what the actuator runs.
TEST(SlurmActuator, RunsScontrolWithoutAShell) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("remediate-slurm-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "args").string();
  {
    std::ofstream(dir / "scontrol")
        << "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done >> " << log << "\n";
    std::ofstream(dir / "sinfo") << "#!/bin/sh\necho 'n1|idle|(null)|none'\n";
  }
  std::filesystem::permissions(dir / "scontrol", std::filesystem::perms::owner_all);
  std::filesystem::permissions(dir / "sinfo", std::filesystem::perms::owner_all);
  SlurmActuator slurm({"n1", (dir / "sinfo").string(), (dir / "scontrol").string(), 10});
  NodeView v = slurm.Read();
  EXPECT_TRUE(v.error.empty()) << v.error;
  EXPECT_TRUE(v.found);
  Decision d;
  d.reason = "gpuscope: XID 79 on GPU 3 (GPU-3) $(touch /tmp/pwned) `x` ;";
  ASSERT_TRUE(slurm.Drain(d).ok());
  ASSERT_TRUE(slurm.Resume().ok());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text,
            "[update]\n[nodename=n1]\n[state=drain]\n"
            "[reason=gpuscope: XID 79 on GPU 3 (GPU-3) $(touch /tmp/pwned) `x` ;]\n"
            "[update]\n[nodename=n1]\n[state=resume]\n");
  SlurmActuator missing({"n1", "gpuscope-no-such-sinfo", "gpuscope-no-such-scontrol", 5});
  EXPECT_EQ(missing.Read().error, "gpuscope-no-such-sinfo: not found in PATH");
  EXPECT_FALSE(missing.Drain(d).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuscope::remediate
