// The simulator's process lists (compute, graphics, MPS clients), per-process
// utilization by sm_share, and per-instance GPM activity on MIG devices.
#include <memory>
#include <string>
#include <vector>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

class SimProcessesTest : public SimTest {
 protected:
  using ListFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
  std::vector<unsigned> Pids(ListFn fn, nvmlDevice_t d) {
    unsigned count = 8;
    nvmlProcessInfo_v2_t infos[8];
    EXPECT_EQ(fn(d, &count, infos), 0);
    std::vector<unsigned> out;
    for (unsigned i = 0; i < count; ++i) out.push_back(infos[i].pid);
    return out;
  }
  // GPM SM activity of MIG instance `gi` between scenario times t0 and t1.
  double MigSmActivity(nvmlDevice_t parent, unsigned gi, double t0, double t1) {
    nvmlGpmSample_t a = nullptr, b = nullptr;
    EXPECT_EQ(nv.nvmlGpmSampleAlloc(&a), 0);
    EXPECT_EQ(nv.nvmlGpmSampleAlloc(&b), 0);
    nv.SetTime(t0);
    EXPECT_EQ(nv.nvmlGpmMigSampleGet(parent, gi, a), 0);
    nv.SetTime(t1);
    EXPECT_EQ(nv.nvmlGpmMigSampleGet(parent, gi, b), 0);
    auto get = std::make_unique<nvmlGpmMetricsGet_t>();
    get->version = 1;
    get->numMetrics = 1;
    get->sample1 = a;
    get->sample2 = b;
    get->metrics[0].metricId = 2;  // SM utilization
    EXPECT_EQ(nv.nvmlGpmMetricsGet(get.get()), 0);
    EXPECT_EQ(nv.nvmlGpmSampleFree(a), 0);
    EXPECT_EQ(nv.nvmlGpmSampleFree(b), 0);
    return get->metrics[0].value;
  }
};

constexpr const char* kLists = R"(gpus:
  - model: h100-sxm
    workload: [{at: 0, kind: training}]
    processes:
      - {pid: 100, name: nvidia-cuda-mps-server, used_memory_gib: 1}
      - {pid: 200, name: client-a, used_memory_gib: 8, type: mps, sm_share: 3}
      - {pid: 300, name: Xorg, used_memory_gib: 0.5, type: graphics, sm_share: 0}
      - {pid: 400, name: viz, used_memory_gib: 2, type: compute+graphics}
)";

TEST_F(SimProcessesTest, EachListShowsItsKind) {
  ASSERT_EQ(Start(WriteTempFile("lists.yaml", kLists), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0)
      << nv.LastError();
  nvmlDevice_t d = Device(0);
  EXPECT_EQ(Pids(nv.nvmlDeviceGetComputeRunningProcesses_v3, d), (std::vector<unsigned>{100, 400}));
  EXPECT_EQ(Pids(nv.nvmlDeviceGetGraphicsRunningProcesses_v3, d),
            (std::vector<unsigned>{300, 400}));
  EXPECT_EQ(Pids(nv.nvmlDeviceGetMPSComputeRunningProcesses_v3, d), (std::vector<unsigned>{200}));
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetGraphicsRunningProcesses_v3(d, &count, nullptr), 7);
  EXPECT_EQ(count, 2u);
  // Utilization is split by sm_share: 1 : 3 : 0 : 1 of the GPU's kernel time.
  nvmlProcessUtilizationSample_t s[4];
  count = 4;
  ASSERT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &count, 0), 0);
  ASSERT_EQ(count, 4u);
  EXPECT_EQ(s[0].pid, 100u);
  EXPECT_EQ(s[1].pid, 200u);
  EXPECT_NEAR(s[1].smUtil, 3.0 * s[0].smUtil, 1.5);
  EXPECT_EQ(s[2].smUtil, 0u);
  EXPECT_GT(s[0].smUtil + s[1].smUtil + s[3].smUtil, 70u);
}

TEST_F(SimProcessesTest, BadProcessTypeNamesTheLine) {
  const std::string path = WriteTempFile("bad-type.yaml", R"(gpus:
  - model: h100-sxm
    processes:
      - {pid: 1, type: vulkan}
)");
  EXPECT_NE(Start(path), 0);
  EXPECT_NE(std::string(nv.LastError()).find("bad-type.yaml:4"), std::string::npos)
      << nv.LastError();
  EXPECT_NE(std::string(nv.LastError()).find("'vulkan'"), std::string::npos) << nv.LastError();
}

TEST_F(SimProcessesTest, MigInstancesHaveTheirOwnGpmActivity) {
  const std::string path = WriteTempFile("mig.yaml", R"(gpus:
  - model: h100-sxm
    mig: {instances: [3g.40gb, 2g.20gb]}
    workload: [{at: 0, kind: training}]
    processes:
      - {pid: 10, used_memory_gib: 20, gpu_instance: 0}
      - {pid: 20, used_memory_gib: 5, gpu_instance: 1, start: 100}
)");
  ASSERT_EQ(Start(path, {{"GPUSCOPE_SIM_FROZEN_TIME", "10"}}), 0) << nv.LastError();
  nvmlDevice_t parent = Device(0);
  unsigned gi0 = 0, gi1 = 0;
  nvmlDevice_t m0 = nullptr, m1 = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(parent, 0, &m0), 0);
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(parent, 1, &m1), 0);
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceId(m0, &gi0), 0);
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceId(m1, &gi1), 0);
  EXPECT_GT(MigSmActivity(parent, gi0, 10, 20), 70);    // its process trains
  EXPECT_EQ(MigSmActivity(parent, gi1, 20, 30), 0);     // no process yet: idle
  EXPECT_GT(MigSmActivity(parent, gi1, 110, 120), 70);  // its process started at 100
  // Samples of different instances do not mix.
  nvmlGpmSample_t a = nullptr, b = nullptr;
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&a), 0);
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&b), 0);
  ASSERT_EQ(nv.nvmlGpmMigSampleGet(parent, gi0, a), 0);
  ASSERT_EQ(nv.nvmlGpmMigSampleGet(parent, gi1, b), 0);
  auto get = std::make_unique<nvmlGpmMetricsGet_t>();
  get->version = 1;
  get->numMetrics = 1;
  get->sample1 = a;
  get->sample2 = b;
  get->metrics[0].metricId = 2;
  EXPECT_EQ(nv.nvmlGpmMetricsGet(get.get()), 2);
  EXPECT_EQ(nv.nvmlGpmSampleFree(a), 0);
  EXPECT_EQ(nv.nvmlGpmSampleFree(b), 0);
}

}  // namespace
}  // namespace gpuscope::sim::testing
