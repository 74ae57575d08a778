// A fake kubelet for attribution tests: the pod-resources service on a unix
// socket, in process, that can be stopped and restarted like a real one.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "attribution/kubelet.h"
#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {

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

inline void AddPod(v1::ListPodResourcesResponse& r, const std::string& ns, const std::string& name,
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
    dir_ =
        std::filesystem::temp_directory_path() / ("gpuscope-kubelet-" + std::to_string(::getpid()));
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

}  // namespace gpuscope::attribution
