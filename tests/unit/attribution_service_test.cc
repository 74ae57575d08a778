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
