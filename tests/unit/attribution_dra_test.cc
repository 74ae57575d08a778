// Kubernetes DRA (issue 41 #2): GPUs and MIG devices granted through a
// ResourceClaim are attributed as device-plugin ones are. A fake kubelet
// (fake_kubelet.h) answers ContainerResources.dynamic_resources, and the
// ResourceSlice answers below have the real API's shape.
//
// Sources of the shapes:
// - k8s.io/kubelet pkg/apis/podresources/v1/api.proto (kubernetes/kubernetes,
//   staging/src/k8s.io/kubelet): ContainerResources.dynamic_resources = 5;
//   DynamicResource{claim_name = 2, claim_namespace = 3, claim_resources = 4};
//   ClaimResource{cdi_devices = 1, driver_name = 2, pool_name = 3, device_name = 4}.
// - Kubernetes API reference, ResourceSlice v1 (resource.k8s.io/v1, 1.34) and
//   v1beta1 (1.32: attributes under devices[].basic): spec.driver,
//   spec.pool{name, generation, resourceSliceCount}, spec.nodeName,
//   spec.devices[]{name, attributes{<name>: {string|int|bool|version}}, capacity}.
// - NVIDIA k8s-dra-driver-gpu, cmd/gpu-kubelet-plugin/deviceinfo.go: device
//   names "gpu-<minor>" and "gpu-<minor>-mig-...", attributes type, uuid,
//   parentUUID, profile, productName, driverVersion (a version).
#include <fstream>

#include "attribution/resource_slices.h"
#include "attribution/service.h"
#include "attribution_test_util.h"

namespace gpuscope::attribution {
namespace {

constexpr char kNode[] = "gpu-node-1";
constexpr char kGpu3Uuid[] = "GPU-3";  // Gpu(3)'s uuid
constexpr char kMigUuid[] = "MIG-7c1e5a2b-0d4f-5e6a-9b8c-1d2e3f4a5b6c";

GpuInfo Mig(unsigned parent_minor, unsigned gi, const std::string& uuid) {
  GpuInfo mig = Gpu(parent_minor);
  mig.gpu_instance_id = gi;
  mig.compute_instance_id = 0;
  mig.mig_uuid = uuid;
  mig.mig_profile = "1g.10gb";
  return mig;
}

// A v1 ResourceSliceList as the API server answers it: NVIDIA's slice of
// `node`, a whole GPU (minor 3) and a MIG device of GPU 7.
std::string SliceList(const std::string& node, int generation = 1) {
  return R"({"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1",
  "metadata":{"resourceVersion":"4242"},
  "items":[{"metadata":{"name":")" +
         node + R"(-gpu.nvidia.com-x7k2p","uid":"0b1c"},
   "spec":{"driver":"gpu.nvidia.com","nodeName":")" +
         node + R"(",
    "pool":{"name":")" +
         node + R"(","generation":)" + std::to_string(generation) +
         R"(,"resourceSliceCount":1},
    "devices":[
     {"name":"gpu-3","attributes":{
       "type":{"string":"gpu"},"uuid":{"string":"GPU-3"},
       "productName":{"string":"NVIDIA H100 80GB HBM3"},
       "driverVersion":{"version":"570.124.6"},
       "resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}},
      "capacity":{"memory":{"value":"80Gi"}}},
     {"name":"gpu-7-mig-1g10gb-19-4","attributes":{
       "type":{"string":"mig"},"uuid":{"string":")" +
         kMigUuid + R"("},
       "parentUUID":{"string":"GPU-7"},"profile":{"string":"1g.10gb"}},
      "capacity":{"multiprocessors":{"value":"16"},"memory":{"value":"9856Mi"}}}]}}]})";
}

TEST(ResourceSlices, ParsesTheDevicesOfThisNode) {
  const SlicePage page = ParseResourceSliceList(SliceList(kNode), kNode);
  ASSERT_TRUE(page.error.empty()) << page.error;
  ASSERT_EQ(page.devices.size(), 2u);
  const DraDeviceFacts& gpu = page.devices.at(SliceKey("gpu.nvidia.com", kNode, "gpu-3"));
  EXPECT_EQ(gpu.uuid, "GPU-3");
  EXPECT_EQ(gpu.type, "gpu");
  const DraDeviceFacts& mig =
      page.devices.at(SliceKey("gpu.nvidia.com", kNode, "gpu-7-mig-1g10gb-19-4"));
  EXPECT_EQ(mig.uuid, kMigUuid);
  EXPECT_EQ(mig.parent_uuid, "GPU-7");
  EXPECT_TRUE(page.next.empty());
  // Another node's slice names nothing here, whatever the server sent.
  EXPECT_TRUE(ParseResourceSliceList(SliceList("gpu-node-2"), kNode).devices.empty());
}

TEST(ResourceSlices, ReadsV1beta1AndQualifiedNames) {
  // 1.32's v1beta1 nests attributes under "basic"; a name may carry the driver's domain.
  const std::string text = R"({"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1beta1",
    "metadata":{"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},
    "items":[{"spec":{"driver":"gpu.nvidia.com","nodeName":"gpu-node-1",
      "pool":{"name":"gpu-node-1","generation":0,"resourceSliceCount":1},
      "devices":[{"name":"gpu-0","basic":{"attributes":{
        "gpu.nvidia.com/uuid":{"string":"GPU-0"},"index":{"int":0},"minor":{"int":0}}}}]}}]})";
  const SlicePage page = ParseResourceSliceList(text, kNode);
  ASSERT_TRUE(page.error.empty()) << page.error;
  EXPECT_EQ(page.devices.at(SliceKey("gpu.nvidia.com", kNode, "gpu-0")).uuid, "GPU-0");
  EXPECT_EQ(page.next, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ");
}

TEST(ResourceSlices, TrustsOnlyUuidStrings) {
  const std::string text = R"({"kind":"ResourceSliceList","items":[{"spec":{
    "driver":"gpu.nvidia.com","nodeName":"gpu-node-1","pool":{"name":"p","generation":1},
    "devices":[{"name":"gpu-0","attributes":{"uuid":{"int":5}}},
               {"name":"gpu-1","attributes":{"uuid":{"string":"../../etc/passwd"}}},
               {"name":"gpu-2","attributes":{"uuid":["GPU-2"]}},
               {"name":"gpu-3"}]}}]})";
  const SlicePage page = ParseResourceSliceList(text, kNode);
  ASSERT_TRUE(page.error.empty()) << page.error;
  for (const auto& [key, facts] : page.devices) EXPECT_EQ(facts.uuid, "") << key;
  EXPECT_FALSE(ParseResourceSliceList(R"({"kind":"Status","code":403})", kNode).error.empty());
  EXPECT_FALSE(ParseResourceSliceList("not json", kNode).error.empty());
  EXPECT_FALSE(
      ParseResourceSliceList(R"({"kind":"ResourceSliceList","items":{}})", kNode).error.empty());
}

TEST(ResourceSlices, OnlyThePoolsNewestGenerationCounts) {
  SliceIndex index = ParseResourceSliceList(SliceList(kNode, 4), kNode).devices;
  // A slice of the old generation, still listed while the driver updates the pool.
  index[SliceKey("gpu.nvidia.com", kNode, "gpu-1")] = {"GPU-1", "", "gpu", 3};
  KeepNewestGeneration(index);
  EXPECT_EQ(index.size(), 2u);
  EXPECT_FALSE(index.contains(SliceKey("gpu.nvidia.com", kNode, "gpu-1")));
}

TEST(ResourceSlices, DeviceIdFromTheSliceElseFromTheName) {
  const SliceIndex index = ParseResourceSliceList(SliceList(kNode), kNode).devices;
  const DraDevice gpu{"gpu.nvidia.com", kNode, "gpu-3", "ml", "c"};
  const DraDevice mig{"gpu.nvidia.com", kNode, "gpu-7-mig-1g10gb-19-4", "ml", "c"};
  EXPECT_EQ(DraDeviceId(gpu, &index), kGpu3Uuid);
  EXPECT_EQ(DraDeviceId(mig, &index), kMigUuid);
  // Without the slices: the name's minor for a whole GPU; a MIG name says no instance.
  EXPECT_EQ(DraDeviceId(gpu, nullptr), "nvidia3");
  EXPECT_EQ(DraDeviceId(mig, nullptr), "");
  EXPECT_EQ(DraDeviceId({"gpu.nvidia.com", kNode, "gpu-3x", "", ""}, nullptr), "");
  EXPECT_EQ(DraDeviceId({"example.com/fpga", kNode, "gpu-3", "", ""}, nullptr), "");
}

// A DRA-granted whole GPU and MIG device get the same holders as the same
// devices granted by the device plugin.
TEST(ResourceSlices, DraGrantsMapLikeDevicePluginGrants) {
  const std::vector<GpuInfo> devices = {Gpu(3), Gpu(7), Mig(7, 1, kMigUuid), Mig(7, 2, "MIG-x")};
  const SliceIndex index = ParseResourceSliceList(SliceList(kNode), kNode).devices;
  std::vector<PodDevice> dra = {
      {"ml", "trainer-0", "main", "gpu.nvidia.com", "",
       DraDevice{"gpu.nvidia.com", kNode, "gpu-3", "ml", "gpu-claim"}},
      {"ml", "slice-0", "c", "gpu.nvidia.com", "",
       DraDevice{"gpu.nvidia.com", kNode, "gpu-7-mig-1g10gb-19-4", "ml", "mig-claim"}}};
  for (PodDevice& d : dra) d.device_id = DraDeviceId(*d.dra, &index);
  const std::vector<PodDevice> plugin = {
      {"ml", "trainer-0", "main", "nvidia.com/gpu", kGpu3Uuid, {}},
      {"ml", "slice-0", "c", "nvidia.com/mig-1g.10gb", kMigUuid, {}}};
  const auto by_dra = BuildPodMap(dra, devices);
  EXPECT_EQ(by_dra, BuildPodMap(plugin, devices));
  EXPECT_EQ(by_dra[0], (std::vector<PodRef>{{"ml", "trainer-0", "main"}}));
  EXPECT_TRUE(by_dra[1].empty());  // the MIG parent is nobody's
  EXPECT_EQ(by_dra[2], (std::vector<PodRef>{{"ml", "slice-0", "c"}}));
  EXPECT_TRUE(by_dra[3].empty());
}

TEST_F(KubeletTest, ListsDraDevicesOfGpuDrivers) {
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "plugin-0", "c", "nvidia.com/gpu", {"GPU-0"});
  AddDraPod(
      r, "ml", "trainer-0", "main", "gpu-claim",
      {{"gpu.nvidia.com", kNode, "gpu-3"}, {"gpu.nvidia.com", kNode, "gpu-7-mig-1g10gb-19-4"}});
  // NVIDIA's compute domains (IMEX channels) are no GPUs.
  AddDraPod(r, "ml", "trainer-0", "main", "cd-claim",
            {{"compute-domain.nvidia.com", kNode, "channel-0"}});
  kubelet_.Set(r);
  Start();
  const auto devices = ListGpuDevices(options_);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_FALSE((*devices)[0].dra);
  const PodDevice& gpu = (*devices)[1];
  ASSERT_TRUE(gpu.dra);
  EXPECT_EQ(gpu.pod, "trainer-0");
  EXPECT_EQ(gpu.container, "main");
  EXPECT_EQ(gpu.resource, "gpu.nvidia.com");
  EXPECT_EQ(gpu.device_id, "");  // a name, not an id: resolved by the source
  EXPECT_EQ(gpu.dra->pool, kNode);
  EXPECT_EQ(gpu.dra->device, "gpu-3");
  EXPECT_EQ(gpu.dra->claim, "gpu-claim");
  EXPECT_EQ(gpu.dra->claim_namespace, "ml");
  EXPECT_EQ((*devices)[2].dra->device, "gpu-7-mig-1g10gb-19-4");
}

// Without API access (here: no service-account token) the whole GPU is
// still attributed by its name's minor, the MIG device is not, and the
// reader is down with the reason.
TEST_F(KubeletTest, WithoutTheApiTheNameNamesTheGpu) {
  v1::ListPodResourcesResponse r;
  AddDraPod(r, "ml", "trainer-0", "main", "gpu-claim", {{"gpu.nvidia.com", kNode, "gpu-3"}});
  AddDraPod(r, "ml", "slice-0", "c", "mig-claim",
            {{"gpu.nvidia.com", kNode, "gpu-7-mig-1g10gb-19-4"}});
  kubelet_.Set(r);
  Start();
  ServiceOptions options;
  options.kubernetes = true;
  options.kubelet = options_;
  options.kubelet.resource_slices.node = kNode;
  options.kubelet.resource_slices.api.api_server = "https://127.0.0.1:1";
  options.kubelet.resource_slices.api.serviceaccount_dir = (dir_ / "no-such-dir").string();
  options.proc_root = (dir_ / "no-proc").string();
  GpuInfo gpu3 = Gpu(3);
  gpu3.uuid = "GPU-5d1c";  // only the minor ties it to "gpu-3"
  const std::vector<GpuInfo> devices = {Gpu(0), gpu3, Gpu(7), Mig(7, 1, kMigUuid)};
  const Attribution a = Collect(options, devices);
  ASSERT_EQ(a.Of(gpu3).size(), 1u);
  EXPECT_EQ(a.Of(gpu3)[0].pod, "trainer-0");
  EXPECT_TRUE(a.Of(devices[3]).empty());
  ASSERT_EQ(a.sources.size(), 2u);
  EXPECT_EQ(a.sources[0].name, "kubelet");
  EXPECT_TRUE(a.sources[0].up);
  EXPECT_EQ(a.sources[1].name, "resourceslices");
  EXPECT_FALSE(a.sources[1].up);
  EXPECT_NE(a.sources[1].error.find("service-account token"), std::string::npos)
      << a.sources[1].error;
  EXPECT_EQ(a.sources[1].failures, 1u);  // gpuscope_attribution_failures_total
  EXPECT_FALSE(a.sources[0].failures);   // the kubelet's has no such count
}

// A node without DRA never asks the API: no resourceslices state at all.
TEST_F(KubeletTest, NoDraNoApi) {
  v1::ListPodResourcesResponse r;
  AddPod(r, "ml", "plugin-0", "c", "nvidia.com/gpu", {"GPU-0"});
  kubelet_.Set(r);
  Start();
  ServiceOptions options;
  options.kubernetes = true;
  options.kubelet = options_;
  options.proc_root = (dir_ / "no-proc").string();
  const Attribution a = Collect(options, {Gpu(0)});
  ASSERT_EQ(a.sources.size(), 1u);
  EXPECT_EQ(a.sources[0].name, "kubelet");
}

}  // namespace
}  // namespace gpuscope::attribution
