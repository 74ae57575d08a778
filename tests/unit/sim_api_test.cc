// Driver-like API behaviour: list handshakes, struct versions, per-entry
// return codes, features absent on a preset, GPM, MIG, the early-535 stride.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

using SimApiTest = SimTest;

TEST_F(SimApiTest, RunningProcessesUseTheInsufficientSizeHandshake) {
  ASSERT_EQ(Start("training-8xh100"), 0);
  nvmlDevice_t d = Device(3);
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &count, nullptr), 7);
  ASSERT_EQ(count, 1u);
  nvmlProcessInfo_v2_t info[1] = {};
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &count, info), 0);
  EXPECT_EQ(info[0].pid, 41203u);
  EXPECT_EQ(info[0].usedGpuMemory, 64ull << 30);
  EXPECT_EQ(info[0].gpuInstanceId, 0xFFFFFFFFu);
  char name[256];
  ASSERT_EQ(nv.nvmlSystemGetProcessName(41203, name, sizeof name), 0);
  EXPECT_STREQ(name, "python3");
  EXPECT_EQ(nv.nvmlSystemGetProcessName(1, name, sizeof name), 6);
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  ASSERT_EQ(Start("idle-node"), 0);
  count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(Device(0), &count, nullptr), 0);
  EXPECT_EQ(count, 0u);
}

TEST_F(SimApiTest, Early535DriversWrite32ByteEntries) {
  std::string path = WriteTempFile("early535.yaml", R"(driver_version: "535.54.03"
gpus:
  - model: h100-sxm
    workload: [{at: 0, kind: training}]
    processes:
      - {pid: 100, used_memory_gib: 1}
      - {pid: 200, used_memory_gib: 2}
)");
  ASSERT_EQ(Start(path), 0) << nv.LastError();
  unsigned char buf[64];
  std::memset(buf, 0xAB, sizeof buf);
  unsigned count = 2;
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(
                Device(0), &count, reinterpret_cast<nvmlProcessInfo_v2_t*>(buf)),
            0);
  ASSERT_EQ(count, 2u);
  unsigned pid0 = 0, pid1 = 0;
  unsigned long long mem1 = 0;
  std::memcpy(&pid0, buf, 4);
  std::memcpy(&pid1, buf + 32, 4);
  std::memcpy(&mem1, buf + 40, 8);
  EXPECT_EQ(pid0, 100u);
  EXPECT_EQ(pid1, 200u);  // at 32, not 24
  EXPECT_EQ(mem1, 2ull << 30);
}

TEST_F(SimApiTest, MemoryInfoV2ChecksItsVersion) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "1"}}), 0);
  nvmlMemory_v2_t m{};
  m.version = 2;
  EXPECT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(Device(0), &m), 25);
  m.version = 0x02000028;
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(Device(0), &m), 0);
  EXPECT_EQ(m.total, 81559ull << 20);
  EXPECT_EQ(m.reserved, 479ull << 20);
  EXPECT_EQ(m.used, 64ull << 30);
  EXPECT_EQ(m.free, m.total - m.reserved - m.used);
  nvmlMemory_t v1{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(Device(0), &v1), 0);
  EXPECT_EQ(v1.used, m.used + m.reserved);
  EXPECT_EQ(nv.nvmlDeviceGetMemoryInfo(Device(0), nullptr), 2);
  nvmlDevice_t bogus = reinterpret_cast<nvmlDevice_t>(&m);
  EXPECT_EQ(nv.nvmlDeviceGetMemoryInfo(bogus, &v1), 2);
  nvmlDevice_t d = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(8, &d), 2);
}

TEST_F(SimApiTest, AbsentFeaturesAnswerNotSupported) {
  ASSERT_EQ(Start("mixed-node", {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t a100 = Device(3), l4 = Device(4), h100 = Device(0);
  nvmlGpmSample_t s = nullptr;
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&s), 0);
  EXPECT_EQ(nv.nvmlGpmSampleGet(a100, s), 3);
  nvmlGpmSupport_t support{1, 7};
  ASSERT_EQ(nv.nvmlGpmQueryDeviceSupport(a100, &support), 0);
  EXPECT_EQ(support.isSupportedDevice, 0u);
  EXPECT_EQ(nv.nvmlGpmSampleFree(s), 0);
  int active = 0;
  EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(l4, 0, &active), 3);
  unsigned c = 0;
  EXPECT_EQ(nv.nvmlDeviceGetTemperatureThreshold(l4, 2, &c), 3);
  unsigned cur = 0, pend = 0;
  EXPECT_EQ(nv.nvmlDeviceGetMigMode(l4, &cur, &pend), 3);
  unsigned count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetRetiredPages(h100, 1, &count, nullptr), 3);  // rows remap instead
  EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(h100, 17, &active), 0);
  EXPECT_EQ(active, 1);
  EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(h100, 18, &active), 2);
  nvmlFieldValue_t f[3] = {};
  f[0].fieldId = 9999;
  f[1].fieldId = 91;
  f[2].fieldId = 83;
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(l4, 3, f), 0);
  EXPECT_EQ(f[0].nvmlReturn, 3);
  EXPECT_EQ(f[1].nvmlReturn, 3);  // no NVLink on L4
  EXPECT_EQ(f[2].nvmlReturn, 0);
  unsigned long long energy = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(l4, &energy), 0);
  EXPECT_EQ(f[2].value.ullVal, energy);
}

TEST_F(SimApiTest, RetiredPagesOnVoltaUseTheHandshake) {
  std::string path = WriteTempFile("volta.yaml", R"(gpus:
  - model: v100-sxm2
    faults:
      - {at: 1, kind: ecc-dbe, count: 2}
)");
  ASSERT_EQ(Start(path, {{"GPUSCOPE_SIM_FROZEN_TIME", "0.5"}}), 0) << nv.LastError();
  nvmlDevice_t d = Device(0);
  unsigned count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetRetiredPages(d, 1, &count, nullptr), 0);
  EXPECT_EQ(count, 0u);
  nv.SetTime(2);
  count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPages(d, 1, &count, nullptr), 7);
  ASSERT_EQ(count, 2u);
  unsigned long long addr[2] = {};
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPages(d, 1, &count, addr), 0);
  EXPECT_NE(addr[0], 0ull);
  EXPECT_EQ(addr[0] % 4096, 0ull);
  int pending = 0;
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPagesPendingStatus(d, &pending), 0);
  EXPECT_EQ(pending, 1);
  unsigned long long dbe = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTotalEccErrors(d, 1, 0, &dbe), 0);
  EXPECT_EQ(dbe, 2ull);
  unsigned a = 0, b = 0, p = 0, f = 0;
  EXPECT_EQ(nv.nvmlDeviceGetRemappedRows(d, &a, &b, &p, &f), 3);
}

TEST_F(SimApiTest, GpmMetricsAverageActivityBetweenSamples) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "10"}}), 0);
  nvmlDevice_t d = Device(0);
  nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&s1), 0);
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&s2), 0);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, s1), 0);
  nv.SetTime(20);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, s2), 0);
  auto get = std::make_unique<nvmlGpmMetricsGet_t>();
  get->version = 1;
  get->sample1 = s1;
  get->sample2 = s2;
  const unsigned ids[] = {2, 5, 10, 61, 63, 9999};
  get->numMetrics = 6;
  for (unsigned i = 0; i < 6; ++i) get->metrics[i].metricId = ids[i];
  ASSERT_EQ(nv.nvmlGpmMetricsGet(get.get()), 0);
  EXPECT_EQ(get->metrics[0].nvmlReturn, 0);
  EXPECT_NEAR(get->metrics[0].value, 86, 3);                    // SM activity 0.86
  EXPECT_NEAR(get->metrics[1].value, 62, 3);                    // tensor 0.62
  EXPECT_NEAR(get->metrics[2].value, 55, 3);                    // DRAM 0.55
  EXPECT_NEAR(get->metrics[3].value, 90000e6 / 1048576, 2000);  // NVLink TX MiB/s
  // Link 0 carries its own (uneven) share of the 18 links' traffic.
  EXPECT_GT(get->metrics[4].value, 90000e6 / 1048576 * 0.02);
  EXPECT_LT(get->metrics[4].value, 90000e6 / 1048576 * 0.13);
  EXPECT_EQ(get->metrics[5].nvmlReturn, 3);
  EXPECT_STREQ(get->metrics[0].metricInfo.shortName, "sm_util");
  get->version = 2;
  EXPECT_EQ(nv.nvmlGpmMetricsGet(get.get()), 25);
  EXPECT_EQ(nv.nvmlGpmSampleFree(s1), 0);
  EXPECT_EQ(nv.nvmlGpmSampleFree(s2), 0);
}

TEST_F(SimApiTest, MigDevicesOfAnH100) {
  ASSERT_EQ(Start("mixed-node", {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t parent = Device(7);
  unsigned cur = 0, pend = 0, max = 0;
  ASSERT_EQ(nv.nvmlDeviceGetMigMode(parent, &cur, &pend), 0);
  EXPECT_EQ(cur, 1u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxMigDeviceCount(parent, &max), 0);
  EXPECT_EQ(max, 7u);
  std::vector<nvmlDevice_t> migs;
  for (unsigned i = 0; i < max; ++i) {
    nvmlDevice_t m = nullptr;
    nvmlReturn_t r = nv.nvmlDeviceGetMigDeviceHandleByIndex(parent, i, &m);
    if (r == 6) continue;  // empty slot
    ASSERT_EQ(r, 0);
    migs.push_back(m);
  }
  ASSERT_EQ(migs.size(), 3u);
  nvmlDevice_t m0 = migs[0];
  unsigned is = 0, gi = 0, ci = 9;
  ASSERT_EQ(nv.nvmlDeviceIsMigDeviceHandle(m0, &is), 0);
  EXPECT_EQ(is, 1u);
  ASSERT_EQ(nv.nvmlDeviceIsMigDeviceHandle(parent, &is), 0);
  EXPECT_EQ(is, 0u);
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceId(m0, &gi), 0);
  ASSERT_EQ(nv.nvmlDeviceGetComputeInstanceId(m0, &ci), 0);
  EXPECT_EQ(ci, 0u);
  char name[96], uuid[96];
  ASSERT_EQ(nv.nvmlDeviceGetName(m0, name, sizeof name), 0);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  ASSERT_EQ(nv.nvmlDeviceGetUUID(m0, uuid, sizeof uuid), 0);
  EXPECT_EQ(std::string(uuid).rfind("MIG-", 0), 0u);
  nvmlDevice_t back = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetHandleByUUID(uuid, &back), 0);
  EXPECT_EQ(back, m0);
  ASSERT_EQ(nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(m0, &back), 0);
  EXPECT_EQ(back, parent);
  nvmlMemory_t mem{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(m0, &mem), 0);
  EXPECT_EQ(mem.total, 40448ull << 20);
  EXPECT_EQ(mem.used, 30ull << 30);
  nvmlUtilization_t util{};
  EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(m0, &util), 3);
  nvmlDeviceAttributes_t attr{};
  ASSERT_EQ(nv.nvmlDeviceGetAttributes_v2(m0, &attr), 0);
  EXPECT_EQ(attr.gpuInstanceSliceCount, 3u);
  EXPECT_EQ(attr.multiprocessorCount, 60u);
  unsigned count = 4;
  nvmlProcessInfo_v2_t procs[4];
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(m0, &count, procs), 0);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(procs[0].pid, 3700u);
  EXPECT_EQ(procs[0].gpuInstanceId, gi);
  nvmlGpmSample_t s = nullptr;
  ASSERT_EQ(nv.nvmlGpmSampleAlloc(&s), 0);
  EXPECT_EQ(nv.nvmlGpmMigSampleGet(parent, gi, s), 0);
  EXPECT_EQ(nv.nvmlGpmMigSampleGet(parent, 99, s), 6);
  EXPECT_EQ(nv.nvmlGpmSampleFree(s), 0);
}

TEST_F(SimApiTest, ProcessUtilizationReportsNewSamplesOnly) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t d = Device(0);
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetProcessUtilization(d, nullptr, &count, 0), 7);
  ASSERT_EQ(count, 1u);
  nvmlProcessUtilizationSample_t s[1];
  ASSERT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &count, 0), 0);
  EXPECT_EQ(s[0].pid, 41200u);
  EXPECT_GT(s[0].smUtil, 70u);
  EXPECT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &count, s[0].timeStamp), 6);
}

}  // namespace
}  // namespace gpuscope::sim::testing
