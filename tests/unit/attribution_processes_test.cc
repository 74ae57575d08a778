// Whose work each GPU process is: its container's pod from the CRI (a fake
// runtime on a unix socket) or from an exclusive pod-resources grant, its
// Slurm job from its cgroup, and its name as the last workload fallback only
// when names are opted in. Processes and cgroups are fixtures under a fake
// /proc root.
#include <fstream>

#include "attribution/service.h"
#include "attribution_test_util.h"
#include "fake_cri.h"

namespace gpuscope::attribution {
namespace {

std::string Hex(char c) { return std::string(64, c); }

class ProcessAttributionTest : public KubeletTest {
 protected:
  void SetUp() override {
    KubeletTest::SetUp();
    proc_ = dir_ / "proc";
    cri_socket_ = (dir_ / "cri.sock").string();
    options_service_.kubelet = KubeletTest::options_;
    options_service_.proc_root = proc_.string();
  }
  void TearDown() override {
    if (cri_server_) cri_server_->Shutdown();
    KubeletTest::TearDown();
  }
  void Cgroup(unsigned pid, const std::string& text) {
    std::filesystem::create_directories(proc_ / std::to_string(pid));
    std::ofstream(proc_ / std::to_string(pid) / "cgroup") << text;
  }
  // A containerd container of a burstable pod, as cgroup v2 with systemd.
  void InContainer(unsigned pid, const std::string& id) {
    Cgroup(pid,
           "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f9e8d7c_6b5a_4c3d_"
           "9e2f_1a0b9c8d7e6f.slice/cri-containerd-" +
               id + ".scope\n");
  }
  void StartCri() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + cri_socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&cri_);
    cri_server_ = builder.BuildAndStart();
    ASSERT_TRUE(cri_server_);
  }
  const AttributionSource* Source(const Attribution& a, const std::string& name) {
    for (const auto& s : a.sources) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }

  std::filesystem::path proc_;
  std::string cri_socket_;
  ServiceOptions options_service_;
  FakeCri cri_;
  std::unique_ptr<grpc::Server> cri_server_;
  const std::vector<GpuInfo> devices_ = {Gpu(0), Gpu(1), Gpu(2)};
};

TEST_F(ProcessAttributionTest, PodFromCriJobFromCgroup) {
  InContainer(200, Hex('a'));  // on GPU 0, granted to one container
  InContainer(201, Hex('b'));  // on shared GPU 1: only the CRI can say which pod
  InContainer(204, Hex('c'));  // on shared GPU 1, unknown to the CRI: no pod
  Cgroup(202, "0::/user.slice/user-0.slice/session-1.scope\n");  // a host process on GPU 0
  Cgroup(203, "0::/system.slice/slurmstepd.scope/job_77/step_0\n");
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0"});
  AddPod(r, "inf", "web-7d9f8c6b4-x2kq9", "srv", "nvidia.com/gpu", {"GPU-1::0"});
  AddPod(r, "inf", "api-b2c4d", "srv", "nvidia.com/gpu", {"GPU-1::1"});
  kubelet_.Set(r);
  Start();
  cri_.Add(Hex('a'), "ml", "trainer-q7x4z", "main");
  cri_.Add(Hex('b'), "inf", "api-b2c4d", "srv");
  cri_.AddPlain(Hex('c'));
  StartCri();
  options_service_.kubernetes = true;
  options_service_.cri.socket = cri_socket_;
  const DeviceProcesses processes = {{"GPU-0", {{200, "python3"}, {202, "nvtop"}}},
                                     {"GPU-1", {{201, "api"}, {204, "web"}}},
                                     {"GPU-2", {{203, "lmp"}}}};
  const Attribution a = Collect(options_service_, devices_, processes);
  ASSERT_NE(Source(a, "cri"), nullptr);
  EXPECT_TRUE(Source(a, "cri")->up);
  ASSERT_NE(a.OfProcess(200), nullptr);
  EXPECT_EQ(*a.OfProcess(200), (Holder{"ml", "trainer-q7x4z", "main", "", "trainer"}));
  ASSERT_NE(a.OfProcess(201), nullptr);
  EXPECT_EQ(*a.OfProcess(201), (Holder{"inf", "api-b2c4d", "srv", "", "api"}));
  EXPECT_EQ(a.OfProcess(202), nullptr);  // not in a container: not the pod's
  EXPECT_EQ(a.OfProcess(204), nullptr);  // a shared GPU, and the CRI does not know it
  ASSERT_NE(a.OfProcess(203), nullptr);
  EXPECT_EQ(*a.OfProcess(203), (Holder{"", "", "", "77", "77"}));
  EXPECT_EQ(a.holders.size(), 3u);  // the devices keep their kubelet and job holders
}

TEST_F(ProcessAttributionTest, CriNamesTheGpuWhenTheKubeletCannot) {
  InContainer(201, Hex('b'));
  cri_.Add(Hex('b').substr(0, 12), "inf", "api-b2c4d", "srv");  // a short id matches too
  StartCri();
  options_service_.cri.socket = cri_socket_;
  const Attribution a = Collect(options_service_, devices_, {{"GPU-1", {{201, "api"}}}});
  EXPECT_EQ(a.Of(devices_[1]), (std::vector<Holder>{{"inf", "api-b2c4d", "srv", "", "api"}}));
  EXPECT_TRUE(a.Of(devices_[0]).empty());
}

TEST_F(ProcessAttributionTest, CriDownCostsItsPodsOnly) {
  InContainer(200, Hex('a'));
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0"});
  kubelet_.Set(r);
  Start();
  options_service_.kubernetes = true;
  options_service_.cri.socket = cri_socket_;  // never started
  const Attribution a = Collect(options_service_, devices_, {{"GPU-0", {{200, "python3"}}}});
  ASSERT_NE(Source(a, "cri"), nullptr);
  EXPECT_FALSE(Source(a, "cri")->up);
  EXPECT_NE(Source(a, "cri")->error.find("missing"), std::string::npos);
  ASSERT_NE(a.OfProcess(200), nullptr);  // the exclusive grant still names it
  EXPECT_EQ(a.OfProcess(200)->pod, "trainer-q7x4z");
}

TEST_F(ProcessAttributionTest, ExclusiveGrantNamesAPodsContainerWhenTheCriIsOff) {
  InContainer(200, Hex('a'));  // on GPU 0, granted to one container: that one
  Cgroup(201, "0::/user.slice/user-0.slice/session-1.scope\n");     // a host process
  Cgroup(202, "0::/system.slice/docker-" + Hex('b') + ".scope\n");  // Docker, not a pod's
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0"});
  kubelet_.Set(r);
  Start();
  options_service_.kubernetes = true;
  const Attribution a =
      Collect(options_service_, devices_, {{"GPU-0", {{200, "a"}, {201, "b"}, {202, "c"}}}});
  ASSERT_NE(a.OfProcess(200), nullptr);
  EXPECT_EQ(a.OfProcess(200)->pod, "trainer-q7x4z");
  EXPECT_EQ(a.OfProcess(201), nullptr);
  EXPECT_EQ(a.OfProcess(202), nullptr);
}

// Issue 31 #8: the CRI's answer is the authority on container ids.
TEST_F(ProcessAttributionTest, ContainerUnknownToTheCriNamesNoPod) {
  InContainer(200, Hex('a'));  // on GPU 0, granted to one container, unknown to the CRI
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0"});
  kubelet_.Set(r);
  Start();
  cri_.Add(Hex('b'), "inf", "api-b2c4d", "srv");
  StartCri();
  options_service_.kubernetes = true;
  options_service_.cri.socket = cri_socket_;
  const Attribution a = Collect(options_service_, devices_, {{"GPU-0", {{200, "python3"}}}});
  EXPECT_TRUE(Source(a, "cri")->up);
  EXPECT_EQ(a.OfProcess(200), nullptr);
  // The device keeps the kubelet's own grant.
  EXPECT_EQ(a.Of(devices_[0]),
            (std::vector<Holder>{{"ml", "trainer-q7x4z", "main", "", "trainer"}}));
}

// Issue 31 #8: a process's cgroup path claimed another tenant's pod (and so
// every series of its GPU) or a Slurm job.
TEST_F(ProcessAttributionTest, ForgedCgroupsClaimNoPodOrJob) {
  const std::string user = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/";
  Cgroup(400, user + "docker-" + Hex('f') + ".scope\n");  // the victim's container id
  Cgroup(401, user + "slurmstepd.scope/job_4242/step_0\n");
  Cgroup(402, "0::/mine/slurm/uid_0/job_4243/step_0\n");
  InContainer(403, Hex('f'));  // the victim's own process
  cri_.Add(Hex('f'), "victim", "db-0", "main");
  StartCri();
  options_service_.cri.socket = cri_socket_;
  const DeviceProcesses processes = {
      {"GPU-0", {{400, "x"}}}, {"GPU-1", {{401, "x"}, {402, "x"}}}, {"GPU-2", {{403, "db"}}}};
  const Attribution a = Collect(options_service_, devices_, processes);
  EXPECT_EQ(a.OfProcess(400), nullptr);
  EXPECT_EQ(a.OfProcess(401), nullptr);
  EXPECT_EQ(a.OfProcess(402), nullptr);
  EXPECT_TRUE(a.Of(devices_[0]).empty());
  EXPECT_TRUE(a.Of(devices_[1]).empty());
  ASSERT_NE(a.OfProcess(403), nullptr);
  EXPECT_EQ(a.Of(devices_[2]), (std::vector<Holder>{{"victim", "db-0", "main", "", "db"}}));
}

// Issue 31 #9: answers of ~100 MB raised RSS to ~500 MB.
TEST_F(ProcessAttributionTest, OversizedOrCrowdedCriAnswerIsRefused) {
  InContainer(200, Hex('a'));
  const std::string padding(50000, 'p');
  for (int i = 0; i < 200; ++i) cri_.Add(Hex('b'), "ns", "pod-" + padding, "c");  // ~30 MB
  cri_.Add(Hex('a'), "ml", "trainer-q7x4z", "main");
  StartCri();
  options_service_.cri.socket = cri_socket_;
  Attribution a = Collect(options_service_, devices_, {{"GPU-0", {{200, "python3"}}}});
  ASSERT_NE(Source(a, "cri"), nullptr);
  EXPECT_FALSE(Source(a, "cri")->up);
  EXPECT_NE(Source(a, "cri")->error.find("answer refused, larger than the limit of 16777216 bytes"),
            std::string::npos)
      << Source(a, "cri")->error;
  EXPECT_EQ(a.OfProcess(200), nullptr);
  // Under the byte limit but over the count: refused too.
  options_service_.cri.max_message_bytes = 64 << 20;
  options_service_.cri.max_containers = 200;
  a = Collect(options_service_, devices_, {{"GPU-0", {{200, "python3"}}}});
  EXPECT_FALSE(Source(a, "cri")->up);
  EXPECT_NE(Source(a, "cri")->error.find("answer refused, 201 containers (limit 200)"),
            std::string::npos)
      << Source(a, "cri")->error;
}

TEST_F(ProcessAttributionTest, ProcessNamesAreTheLastFallbackOnlyWhenOptedIn) {
  Cgroup(300, "0::/user.slice/user-1000.slice/session-2.scope\n");
  Cgroup(301, "0::/system.slice/slurmstepd.scope/job_9/step_0\n");
  const DeviceProcesses processes = {{"GPU-0", {{300, "python3"}, {302, "python3"}}},
                                     {"GPU-1", {{301, "lmp"}}}};
  const Attribution off = Collect(options_service_, devices_, processes);
  EXPECT_TRUE(off.Of(devices_[0]).empty());  // names off: nothing names GPU 0
  EXPECT_EQ(off.OfProcess(300), nullptr);
  options_service_.process_names = true;
  const Attribution on = Collect(options_service_, devices_, processes);
  EXPECT_EQ(on.Of(devices_[0]), (std::vector<Holder>{{"", "", "", "", "python3"}}));
  ASSERT_NE(on.OfProcess(302), nullptr);  // a process that is gone is still named
  EXPECT_EQ(on.OfProcess(302)->workload, "python3");
  // A job outranks the name.
  EXPECT_EQ(on.Of(devices_[1]), (std::vector<Holder>{{"", "", "", "9", "9"}}));
  EXPECT_EQ(on.OfProcess(301)->workload, "9");
}

}  // namespace
}  // namespace gpuscope::attribution
