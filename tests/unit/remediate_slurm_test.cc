// The Slurm actuator's parsing (remediate/slurm.h) and the command runner
// (remediate/command.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "remediate/command.h"
#include "remediate/slurm.h"

namespace gpuscope::remediate {
namespace {

constexpr char kSinfo[] =
    "n1|drained|(null)|1796524538|gpuscope: XID 79 on GPU 3 (GPU-3) https://x/GpuFallenOffBus.md\n"
    "n1|drained|(null)|1796524538|gpuscope: XID 79 on GPU 3 (GPU-3) https://x/GpuFallenOffBus.md\n"
    "n2|idle|gpuscope-no-remediate,a100|Unknown|none\n"
    "n3|draining|(null)|1796524000|bad|dimm by alice\n"
    "n4|mixed|(null)|Unknown|none\n"
    "n5|drained*|(null)|1796524539|gpuscope: row remap failure on GPU 0 (GPU-0) u\n"
    "n6|down|(null)|1796524540|alice: PSU swap, keep out\n"
    "n7|fail|(null)|1796524541|gpuscope: XID 79 on GPU 0 (GPU-0) u\n";

TEST(Sinfo, OurDrainCountsOnceAcrossPartitions) {
  NodeView v = ParseSinfo(kSinfo, "n1");
  EXPECT_TRUE(v.error.empty());
  EXPECT_TRUE(v.found);
  EXPECT_TRUE(v.drained);
  EXPECT_TRUE(IsOurReason(v.reason));
  EXPECT_FALSE(v.opted_out);
  EXPECT_FALSE(v.held);
  EXPECT_EQ(v.nodes, 7);
  EXPECT_EQ(v.drained_by_us, 2);  // n1 and n5; n7 is failed, not drained
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

// issue 39: `scontrol update state=down reason="alice: ..."` shows as "down"
// without "drain"; it was taken for a node in service, drained over alice's
// reason and later resumed.
TEST(Sinfo, AnAdminsDownOrFailIsHeld) {
  NodeView n6 = ParseSinfo(kSinfo, "n6");
  EXPECT_TRUE(n6.held);
  EXPECT_FALSE(n6.drained);
  EXPECT_EQ(n6.state, "down");
  EXPECT_EQ(n6.reason, "alice: PSU swap, keep out");
  // A failed node is held even with a gpuscope reason: FAIL is a person's word.
  EXPECT_TRUE(ParseSinfo(kSinfo, "n7").held);
  EXPECT_TRUE(ParseSinfo(kSinfo, "n3").held);   // an admin's drain
  EXPECT_FALSE(ParseSinfo(kSinfo, "n5").held);  // ours, not responding
  EXPECT_FALSE(ParseSinfo(kSinfo, "n4").held);
}

// Every state sinfo's %T prints (Slurm 22.05, node_state_string, lowered; and
// the "BASE+FLAG" form of newer Slurm): in service or held, drained or not.
TEST(Sinfo, EveryStateSinfoCanPrint) {
  struct Row {
    std::string_view state;
    bool in_service;
    bool drain;
  };
  const Row rows[] = {
      // Plain service, with the flags that leave it so: * not responding,
      // + completing, - planned by the backfill scheduler.
      {"idle", true, false},
      {"idle*", true, false},
      {"allocated", true, false},
      {"allocated*", true, false},
      {"allocated+", true, false},
      {"mixed", true, false},
      {"mixed*", true, false},
      {"mixed-", true, false},
      {"completing", true, false},
      {"completing*", true, false},
      {"planned", true, false},
      {"perfctrs", true, false},
      {"IDLE", true, false},
      // Drained or draining (ours or not is the reason's business).
      {"drained", true, true},
      {"drained*", true, true},
      {"draining", true, true},
      {"draining*", true, true},
      {"idle+drain", true, true},
      {"mixed+drain", true, true},
      {"allocated+drain+completing", true, true},
      {"idle+drain+not_responding", true, true},
      {"idle+planned", true, false},
      // Drained, and something else someone set.
      {"drained$", false, true},
      {"drained@", false, true},
      {"drained^", false, true},
      {"drained#", false, true},
      {"drained%", false, true},
      {"drained~", false, true},
      {"drained!", false, true},
      {"draining$", false, true},
      {"draining@", false, true},
      {"draining^", false, true},
      {"draining#", false, true},
      {"draining%", false, true},
      {"draining~", false, true},
      {"draining!", false, true},
      {"down+drain", false, true},
      {"mixed+drain+maint", false, true},
      {"idle+drain+reboot_requested", false, true},
      // Someone's word, no drain.
      {"down", false, false},
      {"down*", false, false},
      {"down$", false, false},
      {"down@", false, false},
      {"down^", false, false},
      {"down#", false, false},
      {"down%", false, false},
      {"down~", false, false},
      {"down!", false, false},
      {"fail", false, false},
      {"fail*", false, false},
      {"failing", false, false},
      {"failing*", false, false},
      {"maint", false, false},
      {"maint*", false, false},
      {"reserved", false, false},
      {"reboot", false, false},
      {"reboot*", false, false},
      {"reboot^", false, false},
      {"reboot_issued", false, false},
      {"reboot_requested", false, false},
      {"cancel_reboot", false, false},
      {"inval", false, false},
      {"future", false, false},
      {"future*", false, false},
      {"future~", false, false},
      {"unknown", false, false},
      {"unknown*", false, false},
      {"resume", false, false},
      {"cloud", false, false},
      {"power_down", false, false},
      {"power_up", false, false},
      {"powering_down", false, false},
      {"powered_down", false, false},
      {"powering_up", false, false},
      {"idle$", false, false},
      {"idle@", false, false},
      {"idle^", false, false},
      {"idle#", false, false},
      {"idle%", false, false},
      {"idle~", false, false},
      {"idle!", false, false},
      {"allocated$", false, false},
      {"allocated@", false, false},
      {"allocated~", false, false},
      {"mixed$", false, false},
      {"mixed@", false, false},
      {"mixed!", false, false},
      {"completing$", false, false},
      {"completing%", false, false},
      {"idle+fail", false, false},
      {"idle+maint", false, false},
      {"idle+reserved", false, false},
      {"idle+powered_down", false, false},
      {"down+not_responding", false, false},
      {"error", false, false},
      {"?", false, false},
      {"", false, false},
      {"something_new", false, false},
  };
  for (const Row& row : rows) {
    const SlurmState s = ClassifyState(row.state);
    EXPECT_EQ(s.in_service, row.in_service) << "'" << row.state << "'";
    EXPECT_EQ(s.drain, row.drain) << "'" << row.state << "'";
    // The node view: held unless in service; an admin's reason holds it too.
    const std::string line = "n1|" + std::string(row.state) + "|(null)|1796524538|";
    EXPECT_EQ(ParseSinfo(line + "gpuscope: XID 79 on GPU 0 (GPU-0) u", "n1").held, !row.in_service)
        << row.state;
    EXPECT_TRUE(ParseSinfo(line + "alice: keep out", "n1").held) << row.state;
  }
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

// issue 39: a hung scontrol left one orphaned child per retry; the whole
// process group is killed at the deadline.
TEST(Command, TheDeadlineKillsTheProgramsChildrenToo) {
  const std::string pidfile =
      std::filesystem::temp_directory_path() / ("remediate-grandchild-" + std::to_string(getpid()));
  Result<CommandOutput> out =
      RunCommand({"sh", "-c", "sleep 300 & echo $! > " + pidfile + "; wait"}, 0.5);
  ASSERT_FALSE(out.ok());
  std::ifstream in(pidfile);
  int pid = 0;
  ASSERT_TRUE(in >> pid) << pidfile;
  std::filesystem::remove(pidfile);
  // Gone, or a zombie waiting for whoever adopted it.
  auto alive = [pid] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const std::size_t paren = line.rfind(')');
    return paren != std::string::npos && line.substr(paren + 2, 1) != "Z";
  };
  for (int i = 0; i < 100 && alive(); ++i) usleep(20000);
  EXPECT_FALSE(alive()) << "the grandchild " << pid << " outlived the deadline";
  if (alive()) kill(pid, SIGKILL);
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
    std::ofstream(dir / "sinfo") << "#!/bin/sh\necho 'n1|idle|(null)|Unknown|none'\n";
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
