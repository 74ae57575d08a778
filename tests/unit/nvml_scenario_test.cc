// Device access against small purpose-written simulator scenarios: older
// GPUs, MIG, the early-535 process-entry trap, many processes, events.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <set>
#include <thread>

#include "nvml/abi.h"
#include "nvml/device.h"
#include "nvml/events.h"
#include "nvml/gpm.h"
#include "nvml/library.h"
#include "nvml_test_support.h"

namespace gpuscope::nvml {
namespace {

using testing::OpenSim;
using testing::ScopedEnv;
using testing::WriteTempFile;

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

std::unique_ptr<Library> MustOpen(const std::string& name, const std::string& yaml) {
  auto lib = OpenSim(WriteTempFile(name, yaml));
  EXPECT_TRUE(lib.ok()) << lib.status().message();
  return lib.ok() ? std::move(*lib) : nullptr;
}

Device MustDevice(const Library& lib, unsigned index) {
  auto device = lib.DeviceByIndex(index);
  EXPECT_TRUE(device.ok()) << device.status().message();
  return *device;
}

TEST(NvmlScenarioTest, GpmIsNotSupportedOnA100) {
  auto lib = MustOpen("a100.yaml", "gpus:\n  - model: a100-sxm\n");
  ASSERT_NE(lib, nullptr);
  const Device gpu = MustDevice(*lib, 0);
  EXPECT_EQ(*gpu.Name(), "NVIDIA A100-SXM4-80GB");
  auto supported = gpu.GpmSupported();
  EXPECT_TRUE(!supported.ok() || !*supported);
  auto sampler = GpmSampler::Create(gpu);
  ASSERT_FALSE(sampler.ok());
  EXPECT_EQ(sampler.status().code(), Status::Code::kNotSupported) << sampler.status().message();
}

TEST(NvmlScenarioTest, Early535DriverUses32ByteProcessEntries) {
  auto lib = MustOpen("early535.yaml", R"(driver_version: "535.54.03"
gpus:
  - model: h100-sxm
    processes:
      - {pid: 4101, name: train.py, used_memory_gib: 10}
      - {pid: 4102, name: train.py, used_memory_gib: 20}
      - {pid: 4103, name: eval.py, used_memory_gib: 2}
)");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->driver_version(), "535.54.03");
  EXPECT_EQ(lib->process_entry_stride(), 32u);
  auto processes = MustDevice(*lib, 0).ComputeProcesses();
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  ASSERT_EQ(processes->size(), 3u);
  std::set<uint32_t> pids;
  for (const Process& p : *processes) pids.insert(p.pid);
  EXPECT_EQ(pids, (std::set<uint32_t>{4101, 4102, 4103}));
  for (const Process& p : *processes) {
    ASSERT_TRUE(p.used_memory_bytes.has_value());
    const uint64_t expected = p.pid == 4101 ? 10 * kGiB : p.pid == 4102 ? 20 * kGiB : 2 * kGiB;
    EXPECT_EQ(*p.used_memory_bytes, expected) << p.pid;
  }
}

TEST(NvmlScenarioTest, ManyProcessesGoThroughTheSizeHandshake) {
  std::string yaml = "gpus:\n  - model: h100-sxm\n    processes:\n";
  for (int i = 0; i < 40; ++i) {
    yaml += "      - {pid: " + std::to_string(5000 + i) + ", name: worker, used_memory_gib: 1}\n";
  }
  auto lib = MustOpen("many.yaml", yaml);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->process_entry_stride(), 24u);
  auto processes = MustDevice(*lib, 0).ComputeProcesses();
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  ASSERT_EQ(processes->size(), 40u);
  std::set<uint32_t> pids;
  for (const Process& p : *processes) pids.insert(p.pid);
  EXPECT_EQ(*pids.begin(), 5000u);
  EXPECT_EQ(*pids.rbegin(), 5039u);
  EXPECT_EQ(pids.size(), 40u);
  auto name = lib->ProcessName(5007);
  ASSERT_TRUE(name.ok()) << name.status().message();
  EXPECT_EQ(*name, "worker");
}

TEST(NvmlScenarioTest, MigDevicesCarryInstanceIdsAndAttributes) {
  auto lib = MustOpen("mig.yaml", R"(gpus:
  - model: a100-sxm
    mig:
      enabled: true
      instances: [3g.40gb, 2g.20gb]
    processes:
      - {pid: 6001, name: a, used_memory_gib: 5, gpu_instance: 0}
)");
  ASSERT_NE(lib, nullptr);
  const Device gpu = MustDevice(*lib, 0);
  auto mode = gpu.MigMode();
  ASSERT_TRUE(mode.ok()) << mode.status().message();
  EXPECT_TRUE(mode->current);
  auto migs = gpu.MigDevices();
  ASSERT_TRUE(migs.ok()) << migs.status().message();
  ASSERT_EQ(migs->size(), 2u);
  const Device& first = (*migs)[0];
  EXPECT_TRUE(first.is_mig());
  EXPECT_EQ(first.index(), 0u);
  EXPECT_TRUE(first.gpu_instance_id().has_value());
  EXPECT_EQ(first.label().rfind("GPU 0 MIG ", 0), 0u);
  EXPECT_EQ(first.Parent().label(), "GPU 0");
  auto attributes = first.Attributes();
  ASSERT_TRUE(attributes.ok()) << attributes.status().message();
  EXPECT_EQ(attributes->gpu_instance_slice_count, 3u);
  EXPECT_EQ(attributes->memory_mb, 40448u);
  EXPECT_EQ(attributes->multiprocessor_count, 42u);
  // Utilization is not available per MIG device.
  EXPECT_EQ(first.Utilization().status().code(), Status::Code::kNotSupported);
  // The MIG UUID leads back to the same instance.
  auto uuid = first.Uuid();
  ASSERT_TRUE(uuid.ok()) << uuid.status().message();
  auto found = lib->DeviceByUuid(*uuid);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_TRUE(found->is_mig());
  EXPECT_EQ(found->gpu_instance_id(), first.gpu_instance_id());
  auto processes = first.ComputeProcesses();
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  ASSERT_EQ(processes->size(), 1u);
  EXPECT_EQ((*processes)[0].pid, 6001u);
  EXPECT_EQ((*processes)[0].gpu_instance_id, first.gpu_instance_id());
}

TEST(NvmlScenarioTest, LostGpuErrorsNameTheCallTheGpuAndTheCode) {
  auto lib = MustOpen("lost.yaml", R"(gpus:
  - model: h100-sxm
  - model: h100-sxm
    faults:
      - {kind: lost, at: 0}
)");
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(MustDevice(*lib, 0).PowerUsageMilliwatts().ok());
  auto lost = lib->DeviceByIndex(1);
  Status status = lost.status();
  if (lost.ok()) status = lost->PowerUsageMilliwatts().status();
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(IsGpuLost(status)) << status.message();
  EXPECT_EQ(status.code(), Status::Code::kUnavailable);
  EXPECT_NE(status.message().find("(GPU 1): "), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("(NVML_ERROR_GPU_IS_LOST)"), std::string::npos);
}

TEST(NvmlScenarioTest, DoubleBitErrorRetiresAPageOnVoltaAndRemapsARowOnHopper) {
  auto lib = MustOpen("dbe.yaml", R"(gpus:
  - model: v100-sxm2
    faults:
      - {kind: ecc-dbe, at: 0}
  - model: h100-sxm
    faults:
      - {kind: ecc-dbe, at: 0}
)");
  ASSERT_NE(lib, nullptr);
  const Device volta = MustDevice(*lib, 0);
  auto pages = volta.RetiredPagesCount(PageRetireCause::kDbe);
  ASSERT_TRUE(pages.ok()) << pages.status().message();
  EXPECT_EQ(*pages, 1u);
  auto sbe_pages = volta.RetiredPagesCount(PageRetireCause::kMultipleSbe);
  ASSERT_TRUE(sbe_pages.ok()) << sbe_pages.status().message();
  EXPECT_EQ(*sbe_pages, 0u);
  auto dbe = volta.TotalEccErrors(EccKind::kUncorrected, EccScope::kVolatile);
  ASSERT_TRUE(dbe.ok()) << dbe.status().message();
  EXPECT_GE(*dbe, 1u);
  auto rows = MustDevice(*lib, 1).RemappedRows();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->uncorrectable, 1u);
}

TEST(NvmlScenarioTest, GpmOnAMigInstanceSamplesThroughTheParent) {
  auto lib = MustOpen("h100-mig.yaml", R"(gpus:
  - model: h100-sxm
    mig:
      enabled: true
      instances: [3g.40gb]
)");
  ASSERT_NE(lib, nullptr);
  auto migs = MustDevice(*lib, 0).MigDevices();
  ASSERT_TRUE(migs.ok()) << migs.status().message();
  ASSERT_EQ(migs->size(), 1u);
  auto sampler = GpmSampler::Create((*migs)[0]);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  ASSERT_TRUE((*sampler)->Sample().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  ASSERT_TRUE((*sampler)->Sample().ok());
  EXPECT_EQ((*sampler)->samples_taken(), 2);
  const std::array<uint32_t, 1> ids = {kGpmSmUtil};
  auto metrics = (*sampler)->Metrics(ids);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  ASSERT_TRUE((*metrics)[0].ok()) << (*metrics)[0].status().message();
}

}  // namespace
}  // namespace gpuscope::nvml
