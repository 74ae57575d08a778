// The kubelet test fixture: a fake kubelet (fake_kubelet.h) on a unix socket
// in a temp folder, that can be stopped and restarted like a real one.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "attribution/kubelet.h"
#include "fake_kubelet.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::attribution {

// A whole GPU numbered `index` (uuid "GPU-<index>").
inline GpuInfo Gpu(unsigned index) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.minor_number = index;
  gpu.uuid = "GPU-" + std::to_string(index);
  return gpu;
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
