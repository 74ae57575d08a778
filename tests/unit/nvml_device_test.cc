#include <gtest/gtest.h>

#include <array>
#include <set>
#include <thread>

#include "nvml/abi.h"
#include "nvml/device.h"
#include "nvml/gpm.h"
#include "nvml/library.h"
#include "nvml_test_support.h"

namespace gpuscope::nvml {
namespace {

using testing::OpenSim;
using testing::ScopedEnv;
using testing::WriteTempFile;

constexpr uint64_t kMiB = 1024 * 1024;

class H100Test : public ::testing::Test {
 protected:
  void SetUp() override {
    // 100 s into the scenario: the training load is on, energy has accrued.
    ScopedEnv start("GPUSCOPE_SIM_START_TIME", "100");
    auto lib = OpenSim("training-8xh100");
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    lib_ = std::move(*lib);
    auto gpu = lib_->DeviceByIndex(0);
    ASSERT_TRUE(gpu.ok()) << gpu.status().message();
    gpu_ = std::make_unique<Device>(*gpu);
  }

  std::unique_ptr<Library> lib_;
  std::unique_ptr<Device> gpu_;
};

// Unwraps a Result in a test, failing with its message.
template <typename T>
T Must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : T{};
}

TEST_F(H100Test, Identity) {
  EXPECT_EQ(gpu_->index(), 0u);
  EXPECT_EQ(gpu_->label(), "GPU 0");
  EXPECT_FALSE(gpu_->is_mig());
  EXPECT_EQ(Must(gpu_->Name()), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(Must(gpu_->Uuid()).rfind("GPU-", 0), 0u);
  EXPECT_FALSE(Must(gpu_->Serial()).empty());
  EXPECT_EQ(Must(gpu_->VbiosVersion()), "96.00.99.00.01");
  EXPECT_EQ(Must(gpu_->Architecture()), static_cast<uint32_t>(kArchHopper));
  EXPECT_EQ(Must(gpu_->Brand()), kBrandNvidia);
  const ComputeCapability cc = Must(gpu_->CudaComputeCapability());
  EXPECT_EQ(cc.major, 9);
  EXPECT_EQ(cc.minor, 0);
  const PciInfo pci = Must(gpu_->Pci());
  EXPECT_EQ(pci.pci_device_id, 0x233010DEu);
  EXPECT_EQ(pci.pci_sub_system_id, 0x16C110DEu);
  EXPECT_EQ(pci.bus_id.size(), 16u) << pci.bus_id;  // "00000000:18:00.0"
  EXPECT_EQ(pci.bus_id.substr(0, 9), "00000000:");
  EXPECT_TRUE(Must(gpu_->MinorNumber()) < 8u);
  Must(gpu_->PersistenceMode());
  Must(gpu_->ComputeMode());
}

TEST_F(H100Test, Memory) {
  const MemoryInfo mem = Must(gpu_->Memory());
  EXPECT_EQ(mem.total_bytes, 81559 * kMiB);
  ASSERT_TRUE(mem.reserved_bytes.has_value());
  EXPECT_GT(*mem.reserved_bytes, 0u);
  EXPECT_LE(mem.used_bytes + mem.free_bytes, mem.total_bytes);
}

TEST_F(H100Test, PowerClocksThermal) {
  EXPECT_EQ(Must(gpu_->DefaultPowerLimit()), 700000u);
  const PowerLimitRange range = Must(gpu_->PowerLimitConstraints());
  EXPECT_EQ(range.min_mw, 200000u);
  EXPECT_EQ(range.max_mw, 700000u);
  EXPECT_LE(Must(gpu_->EnforcedPowerLimit()), 700000u);
  const uint32_t power = Must(gpu_->PowerUsageMilliwatts());
  EXPECT_GT(power, 0u);
  EXPECT_LE(power, 760000u);
  EXPECT_GT(Must(gpu_->TotalEnergyMillijoules()), 0u);
  EXPECT_EQ(Must(gpu_->MaxClock(ClockDomain::kSm)), 1980u);
  EXPECT_EQ(Must(gpu_->MaxClock(ClockDomain::kMemory)), 2619u);
  EXPECT_LE(Must(gpu_->Clock(ClockDomain::kSm)), 1980u);
  const uint32_t temp = Must(gpu_->Temperature());
  EXPECT_GT(temp, 15u);
  EXPECT_LT(temp, 100u);
  EXPECT_EQ(Must(gpu_->TemperatureThreshold(TempThreshold::kShutdown)), 92u);
  EXPECT_EQ(Must(gpu_->TemperatureThreshold(TempThreshold::kSlowdown)), 89u);
  Must(gpu_->ClockReasons());
  const int pstate = Must(gpu_->PerformanceState());
  EXPECT_TRUE(pstate >= 0 && pstate <= 15) << pstate;
}

TEST_F(H100Test, UtilizationAndPcie) {
  const UtilizationRates util = Must(gpu_->Utilization());
  EXPECT_LE(util.gpu_percent, 100u);
  EXPECT_LE(util.memory_percent, 100u);
  const PcieLinkInfo link = Must(gpu_->PcieLink());
  EXPECT_EQ(link.gen_max, 5u);
  EXPECT_EQ(link.width_max, 16u);
  EXPECT_LE(link.gen_current, link.gen_max);
  Must(gpu_->PcieThroughput(PcieDirection::kTx));
  Must(gpu_->PcieReplayCounter());
}

TEST_F(H100Test, HealthCounters) {
  const EccModeInfo ecc = Must(gpu_->EccMode());
  EXPECT_TRUE(ecc.current);
  EXPECT_EQ(Must(gpu_->TotalEccErrors(EccKind::kUncorrected, EccScope::kVolatile)), 0u);
  const RemappedRowsInfo rows = Must(gpu_->RemappedRows());
  EXPECT_FALSE(rows.failure);
  EXPECT_EQ(Must(gpu_->NvLinkCount()), 18u);
  EXPECT_TRUE(Must(gpu_->NvLinkState(0)));
  // Since the driver loaded (3 days of history): a few CRC errors, no fault.
  EXPECT_LE(Must(gpu_->NvLinkErrorCounter(0, NvLinkCounter::kCrcFlit)), 18u);
}

TEST_F(H100Test, FieldValuesArePerEntry) {
  const std::array<FieldRequest, 4> requests = {{
      {kFiTotalEnergyConsumption, 0},
      {kFiNvLinkLinkCount, 0},
      {99999, 0},  // unknown field: fails on its own
      {kFiPowerInstant, 0},
  }};
  const auto values = gpu_->FieldValues(requests);
  ASSERT_EQ(values.size(), 4u);
  ASSERT_TRUE(values[0].ok()) << values[0].status().message();
  const double energy = values[0]->AsDouble();
  EXPECT_GT(energy, 100 * 100000.0);  // > 100 W for 100 s
  EXPECT_NEAR(static_cast<double>(Must(gpu_->TotalEnergyMillijoules())), energy, energy * 0.01);
  ASSERT_TRUE(values[1].ok()) << values[1].status().message();
  EXPECT_EQ(values[1]->AsDouble(), 18);
  ASSERT_FALSE(values[2].ok());
  EXPECT_NE(values[2].status().message().find("field 99999 (GPU 0)"), std::string::npos)
      << values[2].status().message();
  ASSERT_TRUE(values[3].ok()) << values[3].status().message();
  EXPECT_GT(values[3]->AsDouble(), 0);
}

TEST_F(H100Test, ComputeProcesses) {
  const auto processes = Must(gpu_->ComputeProcesses());
  for (const Process& p : processes) {
    EXPECT_GT(p.pid, 0u);
    EXPECT_FALSE(p.gpu_instance_id.has_value());
    auto name = lib_->ProcessName(p.pid);
    EXPECT_TRUE(name.ok()) << name.status().message();
  }
}

TEST_F(H100Test, ProcessUtilizationSamplesBelongToRunningProcesses) {
  std::set<uint32_t> pids;
  for (const Process& p : Must(gpu_->ComputeProcesses())) pids.insert(p.pid);
  for (const ProcessUtilizationSample& s : Must(gpu_->ProcessUtilization(0))) {
    EXPECT_TRUE(pids.count(s.pid)) << s.pid;
    EXPECT_LE(s.sm_percent, 100u);
  }
}

// Getters the scenario does not pin: each either answers or says NotSupported.
TEST_F(H100Test, OtherGettersAnswerOrSayNotSupported) {
  const std::vector<Status> statuses = {
      gpu_->DisplayMode().status(),
      gpu_->PowerManagementMode().status(),
      gpu_->EncoderUtilization().status(),
      gpu_->DecoderUtilization().status(),
      gpu_->FanSpeed().status(),
      gpu_->SupportedClockReasons().status(),
      gpu_->PowerManagementLimit().status(),
      gpu_->TemperatureThreshold(TempThreshold::kMemoryMax).status(),
      gpu_->MemoryErrorCounter(EccKind::kCorrected, EccScope::kAggregate, EccLocation::kDram)
          .status(),
      gpu_->RetiredPagesPending().status(),
      gpu_->MaxMigDeviceCount().status(),
  };
  for (const Status& s : statuses) {
    EXPECT_TRUE(s.ok() || s.code() == Status::Code::kNotSupported) << s.message();
  }
}

TEST_F(H100Test, GpmMetricsBetweenTwoSamples) {
  EXPECT_TRUE(Must(gpu_->GpmSupported()));
  auto sampler = GpmSampler::Create(*gpu_);
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  const std::array<uint32_t, 3> ids = {kGpmSmUtil, kGpmAnyTensorUtil, 9999};
  EXPECT_FALSE((*sampler)->Metrics(ids).ok());  // no samples yet
  ASSERT_TRUE((*sampler)->Sample().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  ASSERT_TRUE((*sampler)->Sample().ok());
  auto metrics = (*sampler)->Metrics(ids);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  ASSERT_EQ(metrics->size(), 3u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE((*metrics)[i].ok()) << (*metrics)[i].status().message();
    EXPECT_GE(*(*metrics)[i], 0.0);
    EXPECT_LE(*(*metrics)[i], 100.0);
  }
  EXPECT_FALSE((*metrics)[2].ok());
}

TEST_F(H100Test, NotMigByDefault) {
  const MigModeInfo mode = Must(gpu_->MigMode());
  EXPECT_FALSE(mode.current);
  EXPECT_TRUE(Must(gpu_->MigDevices()).empty());
}

}  // namespace
}  // namespace gpuscope::nvml
