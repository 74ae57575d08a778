// The GB200 preset's NVLink fabric (nvmlDeviceGetGpuFabricInfo and ...V), the
// `fabric` fault, and per-link NVLink state over time (nvlink-down with
// `link: all` and `train_s`).
#include <string>

#include "nvml/abi.h"
#include "sim_test_support.h"
#include "test_paths.h"

namespace gpuscope::sim::testing {
namespace {

namespace n = gpuscope::nvml;
using SimFabricTest = SimTest;

unsigned Flag(unsigned mask, unsigned shift) { return (mask >> shift) & n::kFabricFlagWidthMask; }

nvmlGpuFabricInfo_v2_t FabricV2(SimLib& nv, nvmlDevice_t d, nvmlReturn_t* r) {
  nvmlGpuFabricInfo_v2_t info{};
  info.version = n::kGpuFabricInfoV2Version;
  *r = nv.nvmlDeviceGetGpuFabricInfoV(d, &info);
  return info;
}

TEST_F(SimFabricTest, HealthyTrayAnswersEveryVersion) {
  ASSERT_EQ(Start("gb200-tray"), 0) << nv.LastError();
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&count), 0);
  EXPECT_EQ(count, 4u);
  char name[96] = {};
  ASSERT_EQ(nv.nvmlDeviceGetName(Device(0), name, sizeof name), 0);
  EXPECT_STREQ(name, "NVIDIA GB200");
  nvmlReturn_t r = 0;
  nvmlGpuFabricInfo_v2_t a = FabricV2(nv, Device(0), &r);
  ASSERT_EQ(r, 0);
  EXPECT_EQ(a.state, n::kFabricStateCompleted);
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.cliqueId, 1u);
  EXPECT_EQ(a.healthMask, 0x1AAu);  // every flag false, configuration none
  nvmlGpuFabricInfo_v2_t b = FabricV2(nv, Device(3), &r);
  EXPECT_EQ(std::string(a.clusterUuid, a.clusterUuid + 16),
            std::string(b.clusterUuid, b.clusterUuid + 16));  // one fabric

  // v3 adds the health summary; an unknown version is refused.
  nvmlGpuFabricInfo_v3_t v3{};
  v3.version = n::kGpuFabricInfoV3Version;
  using V3Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuFabricInfo_v3_t*);
  auto get_v3 = reinterpret_cast<V3Fn>(nv.nvmlDeviceGetGpuFabricInfoV);
  ASSERT_EQ(get_v3(Device(0), &v3), 0);
  EXPECT_EQ(v3.healthSummary, 1);
  nvmlGpuFabricInfo_v2_t bad{};
  bad.version = 0x02000028;
  EXPECT_EQ(nv.nvmlDeviceGetGpuFabricInfoV(Device(0), &bad), 25);  // ARGUMENT_VERSION_MISMATCH
  EXPECT_EQ(nv.nvmlDeviceGetGpuFabricInfoV(Device(0), nullptr), 2);

  // The unversioned call: 28 bytes, no mask.
  using V1Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuFabricInfo_t*);
  auto get_v1 = reinterpret_cast<V1Fn>(dlsym(nv.handle, "nvmlDeviceGetGpuFabricInfo"));
  ASSERT_NE(get_v1, nullptr);
  nvmlGpuFabricInfo_t v1{};
  ASSERT_EQ(get_v1(Device(0), &v1), 0);
  EXPECT_EQ(v1.state, n::kFabricStateCompleted);
  EXPECT_EQ(v1.cliqueId, 1u);
}

TEST_F(SimFabricTest, OlderBoardsAnswerNotSupported) {
  ASSERT_EQ(Start("training-8xh100"), 0);
  nvmlReturn_t r = 0;
  FabricV2(nv, Device(0), &r);
  EXPECT_EQ(r, 3);
}

TEST_F(SimFabricTest, EachFaultSetsItsField) {
  const std::string scenario =
      test_support::SourceDir() + "/sim/scenarios/health/gb200-fabric.yaml";
  ASSERT_EQ(Start(scenario, {{"GPUSCOPE_SIM_FROZEN_TIME", "10"}}), 0) << nv.LastError();
  nvmlReturn_t r = 0;
  auto at = [&](unsigned g) {
    nvmlGpuFabricInfo_v2_t info = FabricV2(nv, Device(g), &r);
    EXPECT_EQ(r, 0) << g;
    return info;
  };
  EXPECT_EQ(at(0).healthMask, 0x1AAu);
  EXPECT_EQ(at(1).state, n::kFabricStateInProgress);
  EXPECT_EQ(at(2).state, n::kFabricStateCompleted);
  EXPECT_EQ(at(2).status, 999);
  EXPECT_EQ(Flag(at(3).healthMask, n::kFabricDegradedBwShift), n::kFabricFlagTrue);
  EXPECT_EQ(Flag(at(3).healthMask, n::kFabricRouteUnhealthyShift), n::kFabricFlagFalse);
  EXPECT_EQ(Flag(at(4).healthMask, n::kFabricRouteRecoveryShift), n::kFabricFlagTrue);
  EXPECT_EQ(Flag(at(5).healthMask, n::kFabricRouteUnhealthyShift), n::kFabricFlagTrue);
  EXPECT_EQ(Flag(at(6).healthMask, n::kFabricAccessTimeoutRecoveryShift), n::kFabricFlagTrue);
  EXPECT_EQ((at(7).healthMask >> n::kFabricIncorrectConfigShift) & n::kFabricConfigWidthMask,
            4u);  // no partition
  // Before the faults (t < 5) every GPU is healthy.
  nv.SetTime(1);
  for (unsigned g = 0; g < 8; ++g) {
    EXPECT_EQ(at(g).state, n::kFabricStateCompleted) << g;
    EXPECT_EQ(at(g).healthMask, 0x1AAu) << g;
  }
}

TEST_F(SimFabricTest, LinksGoDownTrainAndComeBack) {
  const std::string scenario = WriteTempFile("reboot.yaml", R"(gpus:
  - model: gb200
    workload: [{at: 0, kind: training}]
    faults:
      - {kind: nvlink-down, link: all, at: 10, until: 20, train_s: 30}
      - {kind: nvlink-down, link: 5, at: 100}
)");
  ASSERT_EQ(Start(scenario, {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0) << nv.LastError();
  auto links_up = [&] {
    unsigned up = 0;
    for (unsigned l = 0; l < 18; ++l) {
      int active = -1;
      EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(Device(0), l, &active), 0);
      up += active == 1;
    }
    return up;
  };
  auto state = [&] {
    nvmlReturn_t r = 0;
    return FabricV2(nv, Device(0), &r).state;
  };
  EXPECT_EQ(links_up(), 18u);
  nv.SetTime(15);  // down
  EXPECT_EQ(links_up(), 0u);
  EXPECT_EQ(state(), n::kFabricStateCompleted);
  nv.SetTime(35);  // training: still inactive, registration in progress
  EXPECT_EQ(links_up(), 0u);
  EXPECT_EQ(state(), n::kFabricStateInProgress);
  nv.SetTime(60);  // trained
  EXPECT_EQ(links_up(), 18u);
  EXPECT_EQ(state(), n::kFabricStateCompleted);
  nv.SetTime(120);  // one link down on a running node
  EXPECT_EQ(links_up(), 17u);
}

TEST_F(SimFabricTest, ControlFileInjectsAndClearsFabricFaults) {
  test_support::SimControl control;
  ASSERT_EQ(Start("gb200-tray"), 0) << nv.LastError();
  nvmlReturn_t r = 0;
  control.Send("inject 1 fabric route-unhealthy");
  control.Send("inject 2 fabric state not-started");
  control.Send("inject 3 fabric incorrect-configuration insufficient-nvlinks");
  EXPECT_EQ(Flag(FabricV2(nv, Device(1), &r).healthMask, n::kFabricRouteUnhealthyShift),
            n::kFabricFlagTrue);
  EXPECT_EQ(FabricV2(nv, Device(2), &r).state, n::kFabricStateNotStarted);
  EXPECT_EQ(FabricV2(nv, Device(3), &r).healthMask >> n::kFabricIncorrectConfigShift, 5u);
  control.Send("clear all fabric");
  for (unsigned g = 0; g < 4; ++g) {
    nvmlGpuFabricInfo_v2_t info = FabricV2(nv, Device(g), &r);
    EXPECT_EQ(info.state, n::kFabricStateCompleted) << g;
    EXPECT_EQ(info.healthMask, 0x1AAu) << g;
  }
}

TEST_F(SimFabricTest, ScenarioRejectsBadFabricKeys) {
  const std::string scenario = WriteTempFile("bad.yaml", R"(gpus:
  - model: gb200
    faults:
      - {kind: fabric, incorrect_configuration: sideways}
)");
  EXPECT_EQ(Start(scenario), 2);
  EXPECT_NE(std::string(nv.LastError()).find("incorrect_configuration must be"), std::string::npos)
      << nv.LastError();
}

}  // namespace
}  // namespace gpuscope::sim::testing
