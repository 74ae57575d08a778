// Live processes attached through the control file (sim/attach.h): they show
// in the process lists with their memory and SM use while they live, and
// leave when they exit.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr const char* kIdle = R"(gpus:
  - model: h100-sxm
    count: 2
    workload: [{at: 0, kind: idle}]
)";

class SimAttachTest : public SimTest {
 protected:
  // A child process that waits to be killed.
  pid_t StartChild() {
    const pid_t pid = fork();
    if (pid == 0) {
      pause();
      _exit(0);
    }
    return pid;
  }
  std::vector<std::pair<unsigned, double>> Processes(nvmlDevice_t d) {
    unsigned count = 8;
    nvmlProcessInfo_v2_t infos[8];
    EXPECT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos), 0);
    std::vector<std::pair<unsigned, double>> out;
    for (unsigned i = 0; i < count; ++i)
      out.push_back({infos[i].pid, infos[i].usedGpuMemory / kGiB});
    return out;
  }
};

TEST_F(SimAttachTest, AttachedProcessHoldsMemoryAndWorksUntilItExits) {
  test_support::SimControl control;
  ASSERT_EQ(Start(WriteTempFile("idle2.yaml", kIdle), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0)
      << nv.LastError();
  const pid_t child = StartChild();
  ASSERT_GT(child, 0);
  control.Send("attach 1 " + std::to_string(child) + " memory=10 sm=0.5 name=trainer");
  nv.SetTime(8);
  nvmlDevice_t d = Device(1);
  EXPECT_EQ(Processes(d), (std::vector<std::pair<unsigned, double>>{{unsigned(child), 10.0}}));
  EXPECT_TRUE(Processes(Device(0)).empty());
  nvmlMemory_t memory{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(d, &memory), 0);
  EXPECT_GE(memory.used / kGiB, 10.0);
  nvmlUtilization_t util{};
  ASSERT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &util), 0);
  EXPECT_NEAR(util.gpu, 50, 2);
  char name[64] = {};
  ASSERT_EQ(nv.nvmlSystemGetProcessName(static_cast<unsigned>(child), name, sizeof name), 0);
  EXPECT_STREQ(name, "trainer");

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  control.Send("# the poll that carries this line has seen the exit");
  nv.SetTime(10);
  EXPECT_TRUE(Processes(d).empty());
  ASSERT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &util), 0);
  EXPECT_EQ(util.gpu, 0u);
}

TEST_F(SimAttachTest, BadAttachIsIgnored) {
  test_support::SimControl control;
  ASSERT_EQ(Start(WriteTempFile("idle2b.yaml", kIdle), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  const std::string self = std::to_string(getpid());
  for (const std::string& line :
       {"attach 7 " + self, "attach 0 " + self + " memory=-1", "attach 0 " + self + " sm=2",
        "attach 0/0 " + self, std::string("attach 0 0"), "attach 0 " + self + " colour=red",
        std::string("detach x")}) {
    control.Send(line);
  }
  EXPECT_TRUE(Processes(Device(0)).empty());
  // A pid that is not a live process is refused.
  control.Send("attach 0 4194000 memory=1");
  EXPECT_TRUE(Processes(Device(0)).empty());
  control.Send("attach 0 " + self + " memory=2");
  EXPECT_EQ(Processes(Device(0)).size(), 1u);
  control.Send("detach " + self);
  EXPECT_TRUE(Processes(Device(0)).empty());
}

}  // namespace
}  // namespace gpuscope::sim::testing
