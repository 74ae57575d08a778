// A fake kubelet: the pod-resources service on a unix socket, in process.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>

#include "attribution/kubelet.h"
#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {
namespace {

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    std::lock_guard lock(mu_);
    *response = answer_;
    return grpc::Status::OK;
  }
  void Set(v1::ListPodResourcesResponse answer) {
    std::lock_guard lock(mu_);
    answer_ = std::move(answer);
  }

 private:
  std::mutex mu_;
  v1::ListPodResourcesResponse answer_;
};

void AddPod(v1::ListPodResourcesResponse& r, const std::string& ns, const std::string& name,
            const std::string& container, const std::string& resource,
            const std::vector<std::string>& ids) {
  auto* pod = r.add_pod_resources();
  pod->set_name(name);
  pod->set_namespace_(ns);
  auto* c = pod->add_containers();
  c->set_name(container);
  auto* d = c->add_devices();
  d->set_resource_name(resource);
  for (const auto& id : ids) d->add_device_ids(id);
}

class KubeletTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpuscope-kubelet-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    options_.socket = (dir_ / "kubelet.sock").string();
    options_.timeout = std::chrono::seconds(20);
  }
  void TearDown() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }
  void Start() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + options_.socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&kubelet_);
    builder.SetMaxSendMessageSize(-1);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
  }
  void Stop() {
    if (server_) server_->Shutdown();
    server_.reset();
    std::filesystem::remove(options_.socket);
  }

  std::filesystem::path dir_;
  KubeletOptions options_;
  FakeKubelet kubelet_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(KubeletTest, ListsGpuDevicesOnly) {
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "trainer-q7x4z", "main", "nvidia.com/gpu", {"GPU-0", "GPU-1"});
  AddPod(r, "ml", "slice-0", "c", "nvidia.com/mig-1g.10gb", {"MIG-a"});
  AddPod(r, "web", "nginx-0", "c", "example.com/fpga", {"fpga0"});
  kubelet_.Set(r);
  Start();
  const auto devices = ListGpuDevices(options_);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[0].namespace_name, "ml");
  EXPECT_EQ((*devices)[0].pod, "trainer-q7x4z");
  EXPECT_EQ((*devices)[0].container, "main");
  EXPECT_EQ((*devices)[1].device_id, "GPU-1");
  EXPECT_EQ((*devices)[2].resource, "nvidia.com/mig-1g.10gb");
}

TEST_F(KubeletTest, MissingSocketIsUnavailable) {
  const auto devices = ListGpuDevices(options_);
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(devices.status().message().find("kubelet.sock"), std::string::npos);
}

TEST_F(KubeletTest, SurvivesAKubeletRestart) {
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "a-0", "c", "nvidia.com/gpu", {"GPU-0"});
  kubelet_.Set(r);
  Start();
  ASSERT_TRUE(ListGpuDevices(options_).ok());
  Stop();
  EXPECT_FALSE(ListGpuDevices(options_).ok());
  AddPod(r, "ml", "b-0", "c", "nvidia.com/gpu", {"GPU-1"});
  kubelet_.Set(r);
  Start();
  const auto devices = ListGpuDevices(options_);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(devices->size(), 2u);
}

TEST_F(KubeletTest, AnswersOverFourMebibytes) {
  v1::ListPodResourcesResponse r;
  const std::string padding(5000, 'p');  // long names, as label-heavy clusters have
  for (int i = 0; i < 1000; ++i) {
    AddPod(r, "ns-" + std::to_string(i % 20), "pod-" + std::to_string(i) + "-" + padding, "c",
           "nvidia.com/gpu", {"GPU-" + std::to_string(i % 8)});
  }
  ASSERT_GT(r.ByteSizeLong(), 4u * 1024 * 1024);
  kubelet_.Set(r);
  Start();
  const auto devices = ListGpuDevices(options_);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(devices->size(), 1000u);
  // gRPC's default limit would have refused it: the raise is what lets it through.
  KubeletOptions small = options_;
  small.max_message_bytes = 4 * 1024 * 1024;
  EXPECT_FALSE(ListGpuDevices(small).ok());
}

}  // namespace
}  // namespace gpuscope::attribution
