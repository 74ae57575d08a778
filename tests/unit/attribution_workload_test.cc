#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attribution/hpc_jobs.h"
#include "attribution/workload.h"

namespace gpuscope::attribution {
namespace {

TEST(WorkloadTest, PodOwnerFromControllerNames) {
  EXPECT_EQ(PodOwnerName("llm-serve-7d9f8c6b4-x2kq9"), "llm-serve");  // Deployment
  EXPECT_EQ(PodOwnerName("web-5c98db6f4d-7xk2p"), "web");
  EXPECT_EQ(PodOwnerName("trainer-q7x4z"), "trainer");           // Job, DaemonSet
  EXPECT_EQ(PodOwnerName("sweep-3-q7x4z"), "sweep");             // indexed Job
  EXPECT_EQ(PodOwnerName("nightly-28345670-b2c4d"), "nightly");  // CronJob
  EXPECT_EQ(PodOwnerName("etcd-2"), "etcd");                     // StatefulSet
  EXPECT_EQ(PodOwnerName("bert-finetune-worker-0"), "bert-finetune-worker");
}

TEST(WorkloadTest, HandNamedPodsStayAsTheyAre) {
  EXPECT_EQ(PodOwnerName("debug"), "debug");
  EXPECT_EQ(PodOwnerName("my-notebook"), "my-notebook");  // vowels: not generated
  EXPECT_EQ(PodOwnerName("gpu-burn"), "gpu-burn");
  EXPECT_EQ(PodOwnerName("-x2kq9"), "-x2kq9");
}

TEST(WorkloadTest, Precedence) {
  EXPECT_EQ(WorkloadName("trainer-q7x4z", "slurmname", "42", "python"), "trainer");
  EXPECT_EQ(WorkloadName("", "slurmname", "42", "python"), "slurmname");
  EXPECT_EQ(WorkloadName("", "", "42", "python"), "42");
  EXPECT_EQ(WorkloadName("", "", "", "python"), "python");
  EXPECT_EQ(WorkloadName("", "", "", ""), "");
}

TEST(HpcJobsTest, ParsesLinesTrimsAndDedups) {
  EXPECT_EQ(ParseHpcJobFile("101\n 102 \r\n\n101\n103"),
            (std::vector<std::string>{"101", "102", "103"}));
  EXPECT_TRUE(ParseHpcJobFile("").empty());
  EXPECT_TRUE(ParseHpcJobFile("\n  \n").empty());
}

TEST(HpcJobsTest, FileNamesNameAGpuByIndexMinorOrUuid) {
  GpuInfo gpu;
  gpu.index = 1;
  gpu.minor_number = 0;
  gpu.uuid = "GPU-5e1f2a3b-0000-1111-2222-333344445555";
  GpuInfo mig = gpu;
  mig.gpu_instance_id = 2;
  mig.mig_uuid = "MIG-0a1b2c3d-4444-5555-6666-777788889999";
  const auto names = [&](const char* name, const GpuInfo& device) {
    const auto parsed = ParseHpcGpuName(name);
    return parsed && parsed->Names(device);
  };
  EXPECT_TRUE(names("1", gpu));
  EXPECT_FALSE(names("0", gpu));
  EXPECT_TRUE(names("nvidia0", gpu));  // /dev/nvidia0
  EXPECT_FALSE(names("nvidia1", gpu));
  EXPECT_TRUE(names("GPU-5e1f2a3b-0000-1111-2222-333344445555", gpu));
  EXPECT_TRUE(names("nvidia0", mig));  // a whole GPU's name names its instances
  EXPECT_TRUE(names("MIG-0a1b2c3d-4444-5555-6666-777788889999", mig));
  EXPECT_FALSE(names("MIG-0a1b2c3d-4444-5555-6666-777788889999", gpu));
  for (const char* bad : {"", "nvidia", "nvidiactl", "nvidia-uvm", "-1", "1.bak", "GPU-", "GPU-x",
                          "MIG-GPU-5e1f2a3b-0000-1111-2222-333344445555", "README"}) {
    EXPECT_FALSE(ParseHpcGpuName(bad)) << bad;
  }
}

TEST(HpcJobsTest, ReadsGpuNamedFilesOnly) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuscope-hpc-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "7");  // a directory named like a GPU: ignored
  std::ofstream(dir / "0") << "4242\n";
  std::ofstream(dir / "3") << "5000\n5001\n";
  std::ofstream(dir / "README") << "not a GPU\n";
  std::ofstream(dir / "1.bak") << "9\n";
  std::ofstream(dir / "2") << "\n";  // an emptied file maps nothing
  std::ofstream(dir / "nvidia5") << "6000\n";
  std::ofstream(dir / "nvidiactl") << "7\n";
  const auto jobs = ReadHpcJobDir(dir.string());
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(*jobs, (HpcJobMap{{"0", {"4242"}}, {"3", {"5000", "5001"}}, {"nvidia5", {"6000"}}}));
  std::filesystem::remove_all(dir);
  const auto missing = ReadHpcJobDir(dir.string());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("gpuscope-hpc-test"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::attribution
