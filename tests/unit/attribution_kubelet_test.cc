#include "attribution_test_util.h"

namespace gpuscope::attribution {
namespace {

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

// Issue 31 #9: a kubelet answer of ~100 MB raised RSS to ~500 MB.
TEST_F(KubeletTest, OversizedOrCrowdedAnswerIsRefused) {
  kubelet_.Set(OversizedAnswer());
  Start();
  auto devices = ListGpuDevices(options_);
  ASSERT_FALSE(devices.ok());
  EXPECT_NE(devices.status().message().find("answer refused, larger than the limit of 16777216"),
            std::string::npos)
      << devices.status().message();
  // Under the byte limit, over the count of device ids (any resource counts).
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "a-0", "c", "nvidia.com/gpu", {"GPU-0", "GPU-1"});
  AddPod(r, "web", "b-0", "c", "example.com/fpga", {"fpga0", "fpga1", "fpga2"});
  kubelet_.Set(r);
  options_.max_device_ids = 4;
  devices = ListGpuDevices(options_);
  ASSERT_FALSE(devices.ok());
  EXPECT_NE(devices.status().message().find("answer refused, 5 device ids (limit 4)"),
            std::string::npos)
      << devices.status().message();
  options_.max_device_ids = 5;
  EXPECT_TRUE(ListGpuDevices(options_).ok());
}

}  // namespace
}  // namespace gpuscope::attribution
