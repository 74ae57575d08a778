#include <fstream>
#include <future>

#include "attribution/service.h"
#include "attribution_test_util.h"

namespace gpuscope::attribution {
namespace {

// Waits until `done` holds or 20 s pass (a loaded machine is slow, never wrong).
template <typename F>
bool WaitFor(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ServiceTest : public KubeletTest {
 protected:
  void SetUp() override {
    KubeletTest::SetUp();
    hpc_dir_ = dir_ / "jobs";
    std::filesystem::create_directories(hpc_dir_);
    service_options_.kubernetes = true;
    service_options_.kubelet = KubeletTest::options_;
    service_options_.hpc_job_dir = hpc_dir_.string();
    service_options_.refresh_s = 0.2;
    service_options_.change_poll_s = 0.05;
  }
  bool Up(const Attribution& a, const std::string& source) {
    for (const auto& s : a.sources) {
      if (s.name == source) return s.up;
    }
    return false;
  }

  std::filesystem::path hpc_dir_;
  ServiceOptions service_options_;
  const std::vector<GpuInfo> devices_ = {Gpu(0), Gpu(1), Gpu(2)};
};

TEST_F(ServiceTest, CollectJoinsPodsAndJobs) {
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0"});
  AddPod(r, "inf", "web-7d9f8c6b4-x2kq9", "srv", "nvidia.com/gpu", {"GPU-1::0"});
  AddPod(r, "inf", "api-b2c4d", "srv", "nvidia.com/gpu", {"GPU-1::1"});
  kubelet_.Set(r);
  Start();
  std::ofstream(hpc_dir_ / "2") << "4242\n4243\n";
  const Attribution a = Collect(service_options_, devices_);
  EXPECT_TRUE(Up(a, "kubelet"));
  EXPECT_TRUE(Up(a, "hpc"));
  EXPECT_EQ(a.Of(devices_[0]),
            (std::vector<Holder>{{"ml", "trainer-q7x4z", "main", "", "trainer"}}));
  EXPECT_EQ(a.Of(devices_[1]),
            (std::vector<Holder>{{"inf", "api-b2c4d", "srv", "", "api"},
                                 {"inf", "web-7d9f8c6b4-x2kq9", "srv", "", "web"}}));
  EXPECT_EQ(a.Of(devices_[2]),
            (std::vector<Holder>{{"", "", "", "4242", "4242"}, {"", "", "", "4243", "4243"}}));
}

TEST_F(ServiceTest, SlurmJobsFromProcessCgroups) {
  const auto proc = dir_ / "proc";
  std::filesystem::create_directories(proc / "100");
  std::filesystem::create_directories(proc / "101");
  std::filesystem::create_directories(proc / "102");
  std::ofstream(proc / "100" / "cgroup") << "0::/system.slice/slurmstepd.scope/job_31/step_0\n";
  std::ofstream(proc / "101" / "cgroup") << "0::/user.slice/user-1000.slice/session-2.scope\n";
  std::ofstream(proc / "102" / "cgroup") << "4:memory:/slurm/uid_7/job_32/step_0/task_0\n";
  service_options_.kubernetes = false;
  service_options_.proc_root = proc.string();
  std::ofstream(hpc_dir_ / "2") << "32\n";  // the mapping file and the cgroup agree: once
  const DeviceProcesses processes = {{Attribution::DeviceKey(devices_[0]), {{100}, {101}}},
                                     {Attribution::DeviceKey(devices_[1]), {{101}, {999}}},
                                     {Attribution::DeviceKey(devices_[2]), {{102}}}};
  const Attribution a = Collect(service_options_, devices_, processes);
  EXPECT_EQ(a.Of(devices_[0]), (std::vector<Holder>{{"", "", "", "31", "31"}}));
  EXPECT_TRUE(a.Of(devices_[1]).empty());  // a login shell, and a process that is gone
  EXPECT_EQ(a.Of(devices_[2]), (std::vector<Holder>{{"", "", "", "32", "32"}}));
}

// Issue 41: a node whose device files are not in NVML's (PCI) order, as on
// some AMD CPU hosts: /dev/nvidia0 is NVML's GPU 1. Slurm numbers GPUs by
// their device files, so a job given gres GPU 0 runs on NVML's GPU 1.
class PermutedMinorsTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    service_options_.kubernetes = false;
    const auto proc = dir_ / "proc";
    std::filesystem::create_directories(proc / "500");
    std::ofstream(proc / "500" / "cgroup") << "0::/system.slice/slurmstepd.scope/job_17/step_0\n";
    service_options_.proc_root = proc.string();
    for (unsigned i = 0; i < 3; ++i) devices_[i].minor_number = (i + 2) % 3;  // 2, 0, 1
  }
  Attribution Run(bool process_running) {
    DeviceProcesses processes;
    if (process_running) processes[Attribution::DeviceKey(devices_[1])] = {{500}};
    return Collect(service_options_, devices_, processes);
  }
  std::vector<GpuInfo> devices_ = {Gpu(0), Gpu(1), Gpu(2)};
  const std::vector<Holder> job17_ = {{"", "", "", "17", "17"}};
};

// What the prolog writes now: the device file's minor. The job lands on the
// GPU it runs on, with or without a process yet.
TEST_F(PermutedMinorsTest, MappingByMinorNamesTheGpuTheJobRunsOn) {
  std::ofstream(hpc_dir_ / "nvidia0") << "17\n";
  for (bool running : {false, true}) {
    const Attribution a = Run(running);
    EXPECT_TRUE(a.Of(devices_[0]).empty()) << running;
    EXPECT_EQ(a.Of(devices_[1]), job17_) << running;
    EXPECT_TRUE(a.Of(devices_[2]).empty()) << running;
    EXPECT_TRUE(a.conflicts.empty()) << running;
  }
  // By UUID (Slurm 25.11's CUDA_VISIBLE_DEVICES) too.
  std::filesystem::remove(hpc_dir_ / "nvidia0");
  std::ofstream(hpc_dir_ / "GPU-1") << "17\n";
  EXPECT_EQ(Run(false).Of(devices_[1]), job17_);
}

// Today's wrong answer: the prolog wrote the gres index as an NVML index, so
// GPU 0 (idle) read as the job's. The job's own process, on GPU 1, wins: the
// mapping is dropped for that job and the disagreement reported.
TEST_F(PermutedMinorsTest, TheProcessesCgroupsWinOverAMappingByIndex) {
  std::ofstream(hpc_dir_ / "0") << "17\n";
  const Attribution a = Run(true);
  EXPECT_TRUE(a.Of(devices_[0]).empty());
  EXPECT_EQ(a.Of(devices_[1]), job17_);
  EXPECT_EQ(a.conflicts,
            (std::vector<AttributionConflict>{{"hpc", "17", "GPU 0 (GPU-0)", "GPU 1 (GPU-1)"}}));
  // A job mapped to more GPUs than it runs on yet agrees: it holds GPU 2 too.
  std::filesystem::remove(hpc_dir_ / "0");
  std::ofstream(hpc_dir_ / "nvidia0") << "17\n";
  std::ofstream(hpc_dir_ / "nvidia1") << "17\n";
  const Attribution held = Run(true);
  EXPECT_EQ(held.Of(devices_[1]), job17_);
  EXPECT_EQ(held.Of(devices_[2]), job17_);
  EXPECT_TRUE(held.conflicts.empty());
}

// The running service counts each conflicting job once, however many
// refreshes see it (gpuscope_attribution_conflicts_total{source="hpc"}).
TEST_F(PermutedMinorsTest, EachConflictingJobIsCountedOnce) {
  std::ofstream(hpc_dir_ / "0") << "17\n";
  Service service(service_options_);
  service.SetDevices(devices_);
  service.SetProcesses({{Attribution::DeviceKey(devices_[1]), {{500}}}});
  const auto hpc_conflicts = [&] {
    for (const auto& s : service.Latest()->sources) {
      if (s.name == "hpc") return s.conflicts_total;
    }
    return uint64_t{99};
  };
  ASSERT_TRUE(WaitFor([&] { return service.Latest()->conflicts.size() == 1; }));
  const uint64_t seen = service.refreshes();
  ASSERT_TRUE(WaitFor([&] { return service.refreshes() >= seen + 3; }));
  EXPECT_EQ(hpc_conflicts(), 1u);
  EXPECT_EQ(service.Latest()->Of(devices_[1]), job17_);
  service.Stop();
}

TEST_F(ServiceTest, DownSourceCostsItsLabelsOnlyAndHealsByItself) {
  std::ofstream(hpc_dir_ / "0") << "77\n";
  Service service(service_options_);
  EXPECT_FALSE(Up(*service.Latest(), "kubelet"));  // before the first refresh
  service.SetDevices(devices_);
  // No kubelet yet: the kubelet source is down, the HPC labels still come.
  ASSERT_TRUE(WaitFor([&] { return service.refreshes() >= 1; }));
  auto a = service.Latest();
  EXPECT_FALSE(Up(*a, "kubelet"));
  EXPECT_NE(a->sources[0].error.find("missing"), std::string::npos);
  EXPECT_TRUE(Up(*a, "hpc"));
  EXPECT_EQ(a->Of(devices_[0]).size(), 1u);

  // The kubelet starts: picked up by itself.
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "a-0", "c", "nvidia.com/gpu", {"GPU-1"});
  kubelet_.Set(r);
  Start();
  ASSERT_TRUE(WaitFor([&] { return Up(*service.Latest(), "kubelet"); }));
  EXPECT_EQ(service.Latest()->Of(devices_[1]).at(0).pod, "a-0");

  // It restarts with a new pod: down while gone, then the new answer.
  Stop();
  ASSERT_TRUE(WaitFor([&] { return !Up(*service.Latest(), "kubelet"); }));
  EXPECT_TRUE(service.Latest()->Of(devices_[1]).empty());
  AddPod(r, "ml", "b-0", "c", "nvidia.com/gpu", {"GPU-2"});
  kubelet_.Set(r);
  Start();
  ASSERT_TRUE(WaitFor([&] { return service.Latest()->Of(devices_[2]).size() == 1; }));
  EXPECT_TRUE(Up(*service.Latest(), "kubelet"));
}

TEST_F(ServiceTest, MappingDirectoryChangesArePickedUp) {
  service_options_.kubernetes = false;
  Service service(service_options_);
  service.SetDevices(devices_);
  ASSERT_TRUE(WaitFor([&] { return service.refreshes() >= 1; }));
  EXPECT_TRUE(service.Latest()->holders.empty());
  std::ofstream(hpc_dir_ / "1") << "900\n";  // a prolog runs
  ASSERT_TRUE(WaitFor([&] { return service.Latest()->Of(devices_[1]).size() == 1; }));
  EXPECT_EQ(service.Latest()->Of(devices_[1]).at(0).hpc_job, "900");
  std::filesystem::remove(hpc_dir_ / "1");  // the epilog
  ASSERT_TRUE(WaitFor([&] { return service.Latest()->holders.empty(); }));
  std::filesystem::remove_all(hpc_dir_);  // the directory goes away: down, not fatal
  ASSERT_TRUE(WaitFor([&] { return !Up(*service.Latest(), "hpc"); }));
  service.Stop();
}

// Issue 31 #9: shutdown must never wait on a blocked read.
TEST_F(ServiceTest, StopDoesNotWaitOnAHungSource) {
  kubelet_.Hold();  // answers only when released
  Start();
  service_options_.hpc_job_dir.clear();
  service_options_.kubelet.timeout = std::chrono::hours(1);
  auto service = std::make_unique<Service>(service_options_);
  service->SetDevices(devices_);
  ASSERT_TRUE(WaitFor([&] { return kubelet_.calls() >= 1; }));
  auto stopped = std::async(std::launch::async, [&] { service->Stop(); });
  const bool returned = stopped.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  kubelet_.Release();  // lets a blocked Stop (before the fix) return too
  stopped.wait();
  EXPECT_TRUE(returned) << "Stop() waited for the hung kubelet";
  service.reset();  // the refresh still in flight outlives its Service safely
}

TEST_F(ServiceTest, OversizedKubeletAnswerTakesTheSourceDown) {
  kubelet_.Set(OversizedAnswer());
  Start();
  service_options_.hpc_job_dir.clear();
  const Attribution a = Collect(service_options_, devices_);
  EXPECT_FALSE(Up(a, "kubelet"));
  ASSERT_EQ(a.sources.size(), 1u);
  EXPECT_NE(a.sources[0].error.find("larger than the limit"), std::string::npos)
      << a.sources[0].error;
  EXPECT_TRUE(a.holders.empty());
}

}  // namespace
}  // namespace gpuscope::attribution
