// The simulator's vGPU entry points (issue 43): a host board's instances
// with the ABI current drivers use (nvmlDeviceGetActiveVgpus,
// nvmlVgpuInstanceGet*, nvmlDeviceGetVgpuUtilization's 48-byte samples,
// nvmlVgpuInstanceGetLicenseInfo_v2), the scheduler's time slicing, and a
// guest's licence lapsing mid-run; bad scenarios fail with file and line.
#include <cstring>
#include <string>
#include <vector>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

constexpr const char* kHost = R"(gpus:
  - model: h100-sxm
    vgpu:
      scheduler: best_effort
      instances:
        - {type: H100-20C, vm_id: vm-a, util: 0.9, memory_used_gib: 10, pid: 11}
        - {type: H100-40C, vm_id: vm-b, util: 0.6, memory_used_gib: 30,
           license_expires_at: 10}
  - model: h100-sxm
)";

class SimVgpuTest : public SimTest {
 protected:
  std::vector<nvmlVgpuInstance_t> Active(nvmlDevice_t d) {
    unsigned count = 0;
    EXPECT_EQ(nv.nvmlDeviceGetActiveVgpus(d, &count, nullptr), 7);  // INSUFFICIENT_SIZE
    std::vector<nvmlVgpuInstance_t> ids(count);
    EXPECT_EQ(nv.nvmlDeviceGetActiveVgpus(d, &count, ids.data()), 0);
    return ids;
  }
};

TEST_F(SimVgpuTest, HostInstancesAnswerTheirVmTypeAndFramebuffer) {
  ASSERT_EQ(Start(WriteTempFile("vgpu-host.yaml", kHost), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0)
      << nv.LastError();
  int mode = -1;
  ASSERT_EQ(nv.nvmlDeviceGetVirtualizationMode(Device(0), &mode), 0);
  EXPECT_EQ(mode, 3);  // host vGPU
  ASSERT_EQ(nv.nvmlDeviceGetVirtualizationMode(Device(1), &mode), 0);
  EXPECT_EQ(mode, 0);  // bare metal: no instances, NOT_SUPPORTED
  unsigned none = 0;
  EXPECT_EQ(nv.nvmlDeviceGetActiveVgpus(Device(1), &none, nullptr), 3);
  ASSERT_EQ(nv.nvmlDeviceGetHostVgpuMode(Device(0), &mode), 0);
  EXPECT_EQ(mode, 1);  // SR-IOV

  const std::vector<nvmlVgpuInstance_t> ids = Active(Device(0));
  ASSERT_EQ(ids.size(), 2u);
  char vm[80];
  int vm_type = -1;
  ASSERT_EQ(nv.nvmlVgpuInstanceGetVmID(ids[1], vm, sizeof vm, &vm_type), 0);
  EXPECT_STREQ(vm, "vm-b");
  EXPECT_EQ(vm_type, 1);  // NVML_VGPU_VM_ID_UUID
  nvmlVgpuTypeId_t type = 0;
  ASSERT_EQ(nv.nvmlVgpuInstanceGetType(ids[1], &type), 0);
  char name[64];
  unsigned size = sizeof name;
  ASSERT_EQ(nv.nvmlVgpuTypeGetName(type, name, &size), 0);
  EXPECT_STREQ(name, "GRID H100-40C");
  unsigned long long fb = 0;
  ASSERT_EQ(nv.nvmlVgpuTypeGetFramebufferSize(type, &fb), 0);
  EXPECT_EQ(fb, 40ull << 30);
  ASSERT_EQ(nv.nvmlVgpuInstanceGetFbUsage(ids[1], &fb), 0);
  EXPECT_EQ(fb, 30ull << 30);
  EXPECT_EQ(nv.nvmlVgpuInstanceGetFbUsage(12345, &fb), 6);  // NOT_FOUND
}

TEST_F(SimVgpuTest, SchedulerSharesTheBoardAndLicencesLapse) {
  ASSERT_EQ(Start(WriteTempFile("vgpu-host.yaml", kHost), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0)
      << nv.LastError();
  const std::vector<nvmlVgpuInstance_t> ids = Active(Device(0));
  int value_type = -1;
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetVgpuUtilization(Device(0), 0, &value_type, &count, nullptr), 0);
  ASSERT_EQ(count, 2u);
  nvmlVgpuInstanceUtilizationSample_t samples[2];
  ASSERT_EQ(nv.nvmlDeviceGetVgpuUtilization(Device(0), 0, &value_type, &count, samples), 0);
  EXPECT_EQ(value_type, 1);  // NVML_VALUE_TYPE_UNSIGNED_INT
  // Demands 0.9 + 0.6 > 1: best effort scales them to 60% and 40%.
  EXPECT_EQ(samples[0].vgpuInstance, ids[0]);
  EXPECT_EQ(samples[0].smUtil.uiVal, 60u);
  EXPECT_EQ(samples[1].smUtil.uiVal, 40u);
  EXPECT_EQ(nv.nvmlDeviceGetVgpuUtilization(Device(0), samples[0].timeStamp, &value_type, &count,
                                            samples),
            6);  // nothing newer: NOT_FOUND

  nvmlVgpuProcessUtilizationSample_t procs[2];
  count = 2;
  ASSERT_EQ(nv.nvmlDeviceGetVgpuProcessUtilization(Device(0), 0, &count, procs), 0);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(procs[0].pid, 11u);
  EXPECT_STREQ(procs[0].processName, "python3");

  nvmlVgpuLicenseInfo_t license;
  ASSERT_EQ(nv.nvmlVgpuInstanceGetLicenseInfo_v2(ids[1], &license), 0);
  EXPECT_EQ(license.currentState, 5u);  // licensed until 10 s
  EXPECT_EQ(license.isLicensed, 1);
  EXPECT_EQ(license.licenseExpiry.status, 2);  // a valid date
  nv.SetTime(20);
  ASSERT_EQ(nv.nvmlVgpuInstanceGetLicenseInfo_v2(ids[1], &license), 0);
  EXPECT_EQ(license.currentState, 2u);  // unlicensed, grace period
  EXPECT_EQ(license.isLicensed, 0);
  nv.SetTime(10 + 20 * 60);
  ASSERT_EQ(nv.nvmlVgpuInstanceGetLicenseInfo_v2(ids[1], &license), 0);
  EXPECT_EQ(license.currentState, 3u);  // restricted
  ASSERT_EQ(nv.nvmlVgpuInstanceGetLicenseInfo_v2(ids[0], &license), 0);
  EXPECT_EQ(license.licenseExpiry.status, 4);  // permanent

  nvmlVgpuSchedulerGetState_t sched{};
  ASSERT_EQ(nv.nvmlDeviceGetVgpuSchedulerState(Device(0), &sched), 0);
  EXPECT_EQ(sched.schedulerPolicy, 1u);  // best effort
}

TEST_F(SimVgpuTest, GuestLicenceLapsesMidRun) {
  ASSERT_EQ(Start(WriteTempFile("vgpu-guest.yaml", R"(gpus:
  - model: h100-sxm
    vgpu_guest: {license_expires_at: 30}
)"),
                  {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}),
            0)
      << nv.LastError();
  int mode = -1;
  ASSERT_EQ(nv.nvmlDeviceGetVirtualizationMode(Device(0), &mode), 0);
  EXPECT_EQ(mode, 2);  // a guest's vGPU
  nvmlGridLicensableFeatures_t features;
  ASSERT_EQ(nv.nvmlDeviceGetGridLicensableFeatures_v4(Device(0), &features), 0);
  EXPECT_EQ(features.isGridLicenseSupported, 1);
  ASSERT_EQ(features.licensableFeaturesCount, 1u);
  EXPECT_EQ(features.gridLicensableFeatures[0].featureState, 1u);
  EXPECT_EQ(features.gridLicensableFeatures[0].featureEnabled, 1u);
  EXPECT_EQ(features.gridLicensableFeatures[0].licenseExpiry.status, 2);
  nv.SetTime(31);
  ASSERT_EQ(nv.nvmlDeviceGetGridLicensableFeatures_v4(Device(0), &features), 0);
  EXPECT_EQ(features.gridLicensableFeatures[0].featureState, 0u);
  unsigned count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetActiveVgpus(Device(0), &count, nullptr), 3);  // not a host
}

TEST_F(SimVgpuTest, BadVgpuScenariosNameFileAndLine) {
  const std::string oversized = WriteTempFile("vgpu-big.yaml", R"(gpus:
  - model: h100-sxm
    vgpu:
      instances:
        - {type: H100-80C, vm_id: a}
        - {type: H100-40C, vm_id: b}
)");
  EXPECT_NE(Start(oversized), 0);
  EXPECT_NE(std::string(nv.LastError()).find("vgpu-big.yaml:"), std::string::npos)
      << nv.LastError();
  EXPECT_NE(std::string(nv.LastError()).find("exceed the board's memory"), std::string::npos);
  const std::string both = WriteTempFile("vgpu-both.yaml", R"(gpus:
  - model: h100-sxm
    vgpu: {instances: [{type: H100-20C, vm_id: a}]}
    vgpu_guest: {}
)");
  EXPECT_NE(Start(both), 0);
  EXPECT_NE(std::string(nv.LastError()).find("either a vGPU host"), std::string::npos)
      << nv.LastError();
  const std::string bad_type = WriteTempFile("vgpu-type.yaml", R"(gpus:
  - model: h100-sxm
    vgpu: {instances: [{type: big, vm_id: a}]}
)");
  EXPECT_NE(Start(bad_type), 0);
  EXPECT_NE(std::string(nv.LastError()).find("H100-20C"), std::string::npos) << nv.LastError();
}

}  // namespace
}  // namespace gpuscope::sim::testing
