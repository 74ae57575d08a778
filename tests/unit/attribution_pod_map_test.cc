#include <gtest/gtest.h>

#include "attribution/pod_map.h"

namespace gpuscope::attribution {
namespace {

GpuInfo Gpu(unsigned index, std::string uuid) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.minor_number = index;
  gpu.uuid = std::move(uuid);
  return gpu;
}

GpuInfo Mig(const GpuInfo& parent, unsigned gi, std::string mig_uuid) {
  GpuInfo mig = parent;
  mig.gpu_instance_id = gi;
  mig.compute_instance_id = 0;
  mig.mig_uuid = std::move(mig_uuid);
  return mig;
}

TEST(PodMapTest, ParsesEveryDeviceIdForm) {
  auto ref = ParseDeviceId("GPU-aaaa");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->gpu_uuid, "GPU-aaaa");
  EXPECT_EQ(ref->replica, "");
  ref = ParseDeviceId("GPU-aaaa::3");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->gpu_uuid, "GPU-aaaa");
  EXPECT_EQ(ref->replica, "3");
  ref = ParseDeviceId("MIG-bbbb");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->mig_uuid, "MIG-bbbb");
  ref = ParseDeviceId("MIG-GPU-aaaa/2/0");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->gpu_uuid, "GPU-aaaa");
  EXPECT_EQ(ref->gpu_instance, 2u);
  ref = ParseDeviceId("nvidia3");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->minor, 3u);
  EXPECT_FALSE(ref->gpu_instance);
  ref = ParseDeviceId("nvidia1/gi5/vgpu2");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->minor, 1u);
  EXPECT_EQ(ref->gpu_instance, 5u);
  EXPECT_EQ(ref->replica, "2");
  EXPECT_FALSE(ParseDeviceId("amd0"));
  EXPECT_FALSE(ParseDeviceId("nvidiaX"));
  EXPECT_FALSE(ParseDeviceId("MIG-GPU-aaaa/x/0"));
}

TEST(PodMapTest, ResourceNames) {
  EXPECT_TRUE(IsGpuResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/mig-1g.10gb"));
  EXPECT_FALSE(IsGpuResource("nvidia.com/gpu.shared"));
  const std::vector<std::string> extra = {"nvidia.com/gpu.shared"};
  EXPECT_TRUE(IsGpuResource("nvidia.com/gpu.shared", extra));
  EXPECT_FALSE(IsGpuResource("cpu"));
}

TEST(PodMapTest, WholeGpusMigSlicesAndSharedGpus) {
  const GpuInfo g0 = Gpu(0, "GPU-0000"), g1 = Gpu(1, "GPU-1111"), g2 = Gpu(2, "GPU-2222");
  const std::vector<GpuInfo> devices = {g0, g1, Mig(g1, 1, "MIG-1a"), Mig(g1, 2, "MIG-1b"), g2};
  const std::vector<PodDevice> granted = {
      {"ml", "trainer-q7x4z", "main", "nvidia.com/gpu", "GPU-0000"},
      {"ml", "a-0", "c", "nvidia.com/mig-3g.40gb", "MIG-1a"},
      {"ml", "b-0", "c", "nvidia.com/mig-3g.40gb", "MIG-GPU-1111/2/0"},
      // Time-sliced GPU 2: three replicas to two pods (one of them twice).
      {"inf", "web-x2kq9", "srv", "nvidia.com/gpu", "GPU-2222::0"},
      {"inf", "web-x2kq9", "srv", "nvidia.com/gpu", "GPU-2222::1"},
      {"inf", "api-b2c4d", "srv", "nvidia.com/gpu", "nvidia2"},
      {"x", "ghost", "c", "nvidia.com/gpu", "GPU-9999"},
  };
  size_t unmatched = 0;
  const auto pods = BuildPodMap(granted, devices, &unmatched);
  ASSERT_EQ(pods.size(), devices.size());
  EXPECT_EQ(pods[0], (std::vector<PodRef>{{"ml", "trainer-q7x4z", "main"}}));
  EXPECT_TRUE(pods[1].empty());  // the MIG parent itself is not granted
  EXPECT_EQ(pods[2], (std::vector<PodRef>{{"ml", "a-0", "c"}}));
  EXPECT_EQ(pods[3], (std::vector<PodRef>{{"ml", "b-0", "c"}}));
  EXPECT_EQ(pods[4],
            (std::vector<PodRef>{{"inf", "api-b2c4d", "srv"}, {"inf", "web-x2kq9", "srv"}}));
  EXPECT_EQ(unmatched, 1u);
}

}  // namespace
}  // namespace gpuscope::attribution
