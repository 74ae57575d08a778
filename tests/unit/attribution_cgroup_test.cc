#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <vector>

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

// Issue 31 #8: a user may create cgroups of any name under a delegated subtree;
// only the layouts the kubelet, the runtimes and Slurm make name anything.
TEST(CgroupTest, ForgedPathsNameNothing) {
  const std::string victim = "docker-" + kId + ".scope";
  const std::string user = "/user.slice/user-1000.slice/user@1000.service/app.slice/";
  for (const std::string& path : std::vector<std::string>{
           "/user.slice/user-1000.slice/" + victim, user + victim,
           user + "kubepods.slice/kubepods-pod0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f.slice/" + victim,
           user + "system.slice/docker-" + kId + ".scope",
           "/../../user.slice/user-1000.slice/" + victim,  // as a containerised agent sees it
           "/mine/docker/" + kId, "/system.slice/mine.service/" + victim,
           // a pod slice whose QoS is not its parent's
           "/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod0f9e8d7c_6b5a_4c3d_"
           "9e2f_1a0b9c8d7e6f.slice/" +
               victim,
           "/kubepods.slice/" + victim,  // no pod slice between
           "/mine/job_4242/step_0", "/mine/slurm/uid_0/job_4242/step_0",
           user + "slurm/uid_0/job_4242", user + "slurmstepd.scope/job_4242/step_0",
           "/system.slice/mine.service/slurmstepd.scope/job_4242",
           "/slurm/job_4242/step_0",  // v1 Slurm always puts uid_ first
       }) {
    EXPECT_TRUE(ParseCgroupPath(path).empty()) << path;
    EXPECT_TRUE(ParseProcCgroup("0::" + path + "\n").empty()) << path;
  }
  // cgroup v1: a delegated name=systemd line names nothing either.
  EXPECT_TRUE(
      ParseProcCgroup("1:name=systemd:" + user + victim + "\n0::" + user + victim + "\n").empty());
}

TEST(CgroupTest, WhatAContainerNestsStaysItsOwn) {
  const std::string pod =
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f.slice/";
  const std::string other(64, 'e');
  const auto owner = ParseCgroupPath(pod + "cri-containerd-" + kId + ".scope/docker-" + other +
                                     ".scope/slurm/uid_0/job_1");
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.pod_uid, "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f");
  EXPECT_EQ(owner.slurm_job, "");
}

TEST(CgroupTest, RelativePathsEnterTheLayoutsBelowTheirTop) {
  // A containerised agent sees processes outside its cgroup namespace from the
  // common ancestor down.
  auto owner = ParseCgroupPath(
      "/../../../kubepods-besteffort.slice/kubepods-besteffort-pod0f9e8d7c_6b5a_4c3d_9e2f_"
      "1a0b9c8d7e6f.slice/cri-containerd-" +
      kId + ".scope");
  EXPECT_EQ(owner.pod_uid, "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f");
  EXPECT_EQ(owner.container_id, kId);
  owner = ParseCgroupPath(
      "/../../kubepods.slice/kubepods-pod0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f"
      ".slice/crio-" +
      kId + ".scope");
  EXPECT_EQ(owner.container_id, kId);
  owner = ParseCgroupPath("/../cri-containerd-" + kId + ".scope");  // the agent's own pod
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.pod_uid, "");
  owner = ParseCgroupPath("/../burstable/podaaaabbbb-cccc-dddd-eeee-ffff00001111/" + kId);
  EXPECT_EQ(owner.pod_uid, "aaaabbbb-cccc-dddd-eeee-ffff00001111");
  EXPECT_EQ(ParseCgroupPath("/../slurmstepd.scope/job_5/step_0").slurm_job, "5");
  EXPECT_EQ(ParseCgroupPath("/../../job_6/step_0/user/task_0").slurm_job, "6");
  EXPECT_EQ(ParseCgroupPath("/../../../slurm/uid_3/job_7/step_0").slurm_job, "7");
  // ".." further on is not a path the kernel writes.
  EXPECT_TRUE(ParseCgroupPath("/kubepods.slice/../user.slice/" + kId).empty());
}

// Issue 31 #9: a FIFO in place of a cgroup file blocked the attribution thread
// forever.
TEST(CgroupTest, FifoInPlaceOfTheCgroupFileIsAnErrorNotAWait) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("gpuscope-cgroup-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "400");
  const std::string fifo = (root / "400" / "cgroup").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] { return ReadProcessCgroup(root.string(), 400); });
  if (read.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Blocked in open(): a writer that closes at once lets the reader go.
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    ADD_FAILURE() << "reading a FIFO blocked";
  }
  const auto owner = read.get();
  ASSERT_FALSE(owner.ok());
  EXPECT_EQ(owner.status().message(), "cgroup file " + fifo + ": is a FIFO, not a regular file");
  std::filesystem::remove_all(root);
}

TEST(CgroupTest, OversizedCgroupFileIsRefused) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("gpuscope-cgroup-big-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "401");
  std::ofstream(root / "401" / "cgroup")
      << "0::/system.slice/slurmstepd.scope/job_9/" << std::string(kMaxCgroupFileBytes, 'x');
  const auto owner = ReadProcessCgroup(root.string(), 401);
  ASSERT_FALSE(owner.ok());
  EXPECT_NE(owner.status().message().find("is larger than 64 KiB"), std::string::npos)
      << owner.status().message();
  std::filesystem::remove_all(root);
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
