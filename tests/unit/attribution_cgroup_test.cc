#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attribution/cgroup.h"

namespace gpuscope::attribution {
namespace {

const std::string kId = "4f1c6a2b9d8e7f60a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718";

TEST(CgroupTest, V2SystemdContainerd) {
  const auto owner = ParseProcCgroup(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f.slice/cri-containerd-" +
      kId + ".scope\n");
  EXPECT_EQ(owner.pod_uid, "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f");
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.runtime, "containerd");
}

TEST(CgroupTest, V2SystemdCrio) {
  const auto owner = ParseProcCgroup(
      "0::/kubepods.slice/kubepods-pod11112222_3333_4444_5555_666677778888.slice/crio-" + kId +
      ".scope\n");
  EXPECT_EQ(owner.pod_uid, "11112222-3333-4444-5555-666677778888");
  EXPECT_EQ(owner.runtime, "cri-o");
  EXPECT_EQ(owner.container_id, kId);
}

TEST(CgroupTest, CrioConmonIsNotTheContainer) {
  const auto owner = ParseCgroupPath(
      "/kubepods.slice/kubepods-pod11112222_3333_4444_5555_666677778888.slice/crio-conmon-" + kId +
      ".scope");
  EXPECT_EQ(owner.pod_uid, "11112222-3333-4444-5555-666677778888");
  EXPECT_EQ(owner.container_id, "");
}

TEST(CgroupTest, V1CgroupfsDriver) {
  const auto owner = ParseProcCgroup(
      "12:pids:/kubepods/besteffort/podaaaabbbb-cccc-dddd-eeee-ffff00001111/" + kId +
      "\n11:memory:/kubepods/besteffort/podaaaabbbb-cccc-dddd-eeee-ffff00001111/" + kId +
      "\n1:name=systemd:/kubepods/besteffort/podaaaabbbb-cccc-dddd-eeee-ffff00001111/" + kId +
      "\n");
  EXPECT_EQ(owner.pod_uid, "aaaabbbb-cccc-dddd-eeee-ffff00001111");
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.runtime, "");
}

TEST(CgroupTest, V1SystemdContainerdColonForm) {
  const auto owner = ParseProcCgroup(
      "4:memory:/system.slice/containerd.service/"
      "kubepods-burstable-pod0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f.slice:cri-containerd:" +
      kId + "\n");
  EXPECT_EQ(owner.pod_uid, "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f");
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.runtime, "containerd");
}

TEST(CgroupTest, PlainDockerBothDrivers) {
  auto owner = ParseProcCgroup("0::/system.slice/docker-" + kId + ".scope\n");
  EXPECT_EQ(owner.runtime, "docker");
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.pod_uid, "");
  owner = ParseProcCgroup("9:cpu,cpuacct:/docker/" + kId + "\n");
  EXPECT_EQ(owner.runtime, "docker");
  EXPECT_EQ(owner.container_id, kId);
}

TEST(CgroupTest, SlurmV1AndV2) {
  auto owner = ParseProcCgroup(
      "7:devices:/slurm/uid_1001/job_4242/step_0/task_0\n"
      "6:memory:/slurm/uid_1001/job_4242/step_0/task_0\n");
  EXPECT_EQ(owner.slurm_job, "4242");
  EXPECT_EQ(owner.slurm_uid, "1001");
  owner = ParseProcCgroup("0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0\n");
  EXPECT_EQ(owner.slurm_job, "77");
  EXPECT_EQ(owner.slurm_uid, "");
}

TEST(CgroupTest, HostProcessHasNoOwner) {
  EXPECT_TRUE(ParseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n").empty());
  EXPECT_TRUE(ParseProcCgroup("").empty());
  EXPECT_TRUE(ParseProcCgroup("garbage without colons\n").empty());
  // A job_ segment outside a Slurm tree is not a job.
  EXPECT_TRUE(ParseProcCgroup("0::/system.slice/job_12.service\n").empty());
}

TEST(CgroupTest, ReadsUnderProcRoot) {
  const auto root = std::filesystem::temp_directory_path() / "gpuscope-cgroup-test";
  std::filesystem::create_directories(root / "321");
  std::ofstream(root / "321" / "cgroup") << "0::/slurm/uid_5/job_9/step_0\n";
  const auto owner = ReadProcessCgroup(root.string(), 321);
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  EXPECT_EQ(owner->slurm_job, "9");
  const auto gone = ReadProcessCgroup(root.string(), 322);
  EXPECT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find("322/cgroup"), std::string::npos);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace gpuscope::attribution
