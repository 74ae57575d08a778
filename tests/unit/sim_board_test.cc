// Board facts the simulator models for dcgm-exporter's fields (issue 13):
// BAR1, virtualization mode, the InfoROM, and the R560+ per-reason clock
// event counters (fields 251..253), which older drivers do not know.
#include <string>

#include "sim_test_support.h"
#include "test_paths.h"

namespace gpuscope::sim::testing {
namespace {

using SimBoardTest = SimTest;

TEST_F(SimBoardTest, Bar1VirtualizationAndInforom) {
  ASSERT_EQ(Start("training-8xh100"), 0);
  nvmlDevice_t d = Device(0);
  nvmlBAR1Memory_t bar1{};
  ASSERT_EQ(nv.nvmlDeviceGetBAR1MemoryInfo(d, &bar1), 0);
  EXPECT_EQ(bar1.bar1Total, 131072ull << 20);  // 128 GiB on an H100 80GB
  EXPECT_EQ(bar1.bar1Used + bar1.bar1Free, bar1.bar1Total);
  EXPECT_EQ(nv.nvmlDeviceGetBAR1MemoryInfo(d, nullptr), 2);
  int mode = -1;
  ASSERT_EQ(nv.nvmlDeviceGetVirtualizationMode(d, &mode), 0);
  EXPECT_EQ(mode, 0);
  char version[16] = {};
  ASSERT_EQ(nv.nvmlDeviceGetInforomImageVersion(d, version, sizeof version), 0);
  EXPECT_STREQ(version, "G520.0200.00.05");
  ASSERT_EQ(nv.nvmlDeviceGetInforomVersion(d, 1, version, sizeof version), 0);  // ECC object
  EXPECT_STREQ(version, "7.16");
  EXPECT_EQ(nv.nvmlDeviceGetInforomVersion(d, 2, version, sizeof version), 3);  // no power object
  unsigned a = 0, b = 0;
  ASSERT_EQ(nv.nvmlDeviceGetInforomConfigurationChecksum(d, &a), 0);
  ASSERT_EQ(nv.nvmlDeviceGetInforomConfigurationChecksum(Device(1), &b), 0);
  EXPECT_NE(a, b);  // per board
  EXPECT_EQ(nv.nvmlDeviceValidateInforom(d), 0);
}

nvmlFieldValue_t Field(unsigned id) {
  nvmlFieldValue_t f{};
  f.fieldId = id;
  return f;
}

TEST_F(SimBoardTest, ClocksEventReasonCountersNeedR560) {
  // GPU 2 of power-cap is braked from 60 s on; 120 s in, 60 s of it.
  const std::string scenario =
      test_support::SourceDir() + "/sim/scenarios/diagnosis/power-cap.yaml";
  ASSERT_EQ(Start(scenario, {{"GPUSCOPE_SIM_FROZEN_TIME", "120"}}), 0) << nv.LastError();
  nvmlFieldValue_t f[3] = {Field(251), Field(252), Field(253)};
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(Device(2), 3, f), 0);
  for (const nvmlFieldValue_t& v : f) EXPECT_EQ(v.nvmlReturn, 0) << v.fieldId;
  EXPECT_GT(f[2].value.ullVal, 50ull * 1000 * 1000 * 1000);
  EXPECT_LT(f[2].value.ullVal, 70ull * 1000 * 1000 * 1000);
  ASSERT_EQ(nv.nvmlShutdown(), 0);

  const std::string old = WriteTempFile("r550.yaml", R"(driver_version: "550.54.15"
gpus:
  - model: h100-sxm
    workload: [{at: 0, kind: training}]
)");
  ASSERT_EQ(Start(old), 0) << nv.LastError();
  nvmlFieldValue_t g[1] = {Field(251)};
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(Device(0), 1, g), 0);
  EXPECT_EQ(g[0].nvmlReturn, 3);  // NOT_SUPPORTED: an R550 driver has no such id
}

}  // namespace
}  // namespace gpuscope::sim::testing
