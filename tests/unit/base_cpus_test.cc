#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>

#include "base/cpus.h"
#include "temp_dir.h"

namespace gpuscope::base {
namespace {

// A fake /sys/fs/cgroup: cpu.max files at chosen levels.
class CgroupCpuQuotaTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(root_.empty()); }

  void CpuMax(const std::string& cgroup, const std::string& text) {
    std::filesystem::create_directories(root_ + cgroup);
    std::ofstream(root_ + cgroup + "/cpu.max") << text;
  }

  test_support::TempDir dir_;
  const std::string& root_ = dir_.path();
};

TEST_F(CgroupCpuQuotaTest, NoLimitAnywhereIsNone) {
  CpuMax("/kubepods/pod1/c1", "max 100000\n");
  EXPECT_FALSE(CgroupCpuQuota(root_, "0::/kubepods/pod1/c1\n").has_value());
}

TEST_F(CgroupCpuQuotaTest, TheTightestLevelOnThePathWins) {
  CpuMax("/kubepods", "800000 100000\n");
  CpuMax("/kubepods/pod1", "150000 100000\n");  // 1.5 CPUs, a Kubernetes limit
  CpuMax("/kubepods/pod1/c1", "max 100000\n");
  EXPECT_EQ(CgroupCpuQuota(root_, "0::/kubepods/pod1/c1\n"), 1.5);
  EXPECT_EQ(CgroupCpuQuota(root_, "0::/kubepods\n"), 8.0);
}

TEST_F(CgroupCpuQuotaTest, AContainerSeesItsOwnRoot) {
  CpuMax("", "50000 100000\n");  // a cgroup namespace: the container's cgroup is "/"
  EXPECT_EQ(CgroupCpuQuota(root_, "0::/\n"), 0.5);
}

TEST_F(CgroupCpuQuotaTest, CgroupV1AndGarbageAreNoQuota) {
  CpuMax("/a", "50000 100000\n");
  EXPECT_FALSE(CgroupCpuQuota(root_, "4:cpu,cpuacct:/a\n").has_value());
  EXPECT_FALSE(CgroupCpuQuota(root_, "").has_value());
  CpuMax("/b", "fifty 100000\n");
  EXPECT_FALSE(CgroupCpuQuota(root_, "0::/b\n").has_value());
  CpuMax("/c", "0 100000\n");
  EXPECT_FALSE(CgroupCpuQuota(root_, "0::/c\n").has_value());
  EXPECT_FALSE(CgroupCpuQuota(root_, "0::/missing/level\n").has_value());
}

TEST(UsableCpusTest, CountsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const unsigned all = UsableCpus();
  EXPECT_GE(all, 1u);
  EXPECT_LE(all, static_cast<unsigned>(CPU_COUNT(&saved)));
  // Pinned to one CPU, the process may use one, whatever the machine has.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(UsableCpus(), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}

}  // namespace
}  // namespace gpuscope::base
