// The sampler and inventory against the simulator: identity, values,
// absent metrics, batching, integrals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "collect/inventory.h"
#include "collect/sampler.h"
#include "collect_test_support.h"

namespace gpuscope::collect {
namespace {

using testing::ManualClock;
using testing::ScopedEnv;
using testing::SimControl;
using testing::SimOptions;
using testing::WriteTempFile;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(CollectInventoryTest, Training8xH100) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  auto library = nvml::Library::Open(testing::SimLibraryPath());
  ASSERT_TRUE(library.ok()) << library.status().message();
  auto devices = DiscoverDevices(**library);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 8u);
  std::set<std::string> uuids;
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const GpuInfo& info = (*devices)[i].info;
    EXPECT_EQ(info.index, i);
    EXPECT_EQ(info.name, "NVIDIA H100 80GB HBM3");
    EXPECT_THAT(info.uuid, ::testing::StartsWith("GPU-"));
    uuids.insert(info.uuid);
    EXPECT_EQ(info.architecture, "Hopper");
    EXPECT_EQ(info.compute_capability, "9.0");
    EXPECT_FALSE(info.pci_bus_id.empty());
    EXPECT_FALSE(info.serial.empty());
    EXPECT_EQ(info.nvlink_count, 18u);
    EXPECT_TRUE(info.gpm_supported);
    EXPECT_FALSE(info.mig_enabled);
    EXPECT_FALSE(info.is_mig());
  }
  EXPECT_EQ(uuids.size(), 8u);
  const SystemInfo system = ReadSystemInfo(**library);
  EXPECT_FALSE(system.driver_version.empty());
  EXPECT_EQ(system.cuda_version, "12.8");
  EXPECT_FALSE(system.hostname.empty());
}

TEST(CollectInventoryTest, MigInstancesAreExtraEntries) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "mixed-node");
  auto library = nvml::Library::Open(testing::SimLibraryPath());
  ASSERT_TRUE(library.ok()) << library.status().message();
  auto devices = DiscoverDevices(**library);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  std::vector<const GpuInfo*> migs;
  const GpuInfo* parent = nullptr;
  for (const DeviceEntry& e : *devices) {
    if (e.info.is_mig()) migs.push_back(&e.info);
    if (!e.info.is_mig() && e.info.mig_enabled) parent = &e.info;
  }
  ASSERT_NE(parent, nullptr);
  ASSERT_EQ(migs.size(), 3u);
  std::multiset<std::string> profiles;
  for (const GpuInfo* mig : migs) {
    EXPECT_EQ(mig->index, parent->index);
    EXPECT_EQ(mig->uuid, parent->uuid);
    EXPECT_THAT(mig->mig_uuid, ::testing::StartsWith("MIG-"));
    EXPECT_TRUE(mig->compute_instance_id.has_value());
    profiles.insert(mig->mig_profile);
  }
  EXPECT_EQ(profiles, (std::multiset<std::string>{"1g.10gb", "2g.20gb", "3g.40gb"}));
}

TEST(CollectSamplerTest, SampleOnceReadsCoherentH100Values) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ScopedEnv start("GPUSCOPE_SIM_START_TIME", "100");
  Sampler sampler(SimOptions());
  SnapshotPtr snap = sampler.SampleOnce(true);
  ASSERT_TRUE(snap->nvml_up) << snap->nvml_error;
  ASSERT_EQ(snap->samples.size(), 8u);
  EXPECT_EQ(snap->system.cuda_version, "12.8");
  EXPECT_GT(snap->nvml_calls, 0u);
  for (const GpuSample& s : snap->samples) {
    EXPECT_EQ(s.state, GpuState::kOk) << s.state_reason;
    EXPECT_NEAR(s.Get(Metric::kGpuUtil), 99, 2);
    EXPECT_NEAR(s.Get(Metric::kMemoryTotal), 81559 * 1048576.0, 1);
    EXPECT_GT(s.Get(Metric::kMemoryUsed), 60 * kGiB);
    EXPECT_GT(s.Get(Metric::kPowerUsage), 400);
    EXPECT_LE(s.Get(Metric::kPowerUsage), 700);
    EXPECT_EQ(s.Get(Metric::kPowerLimit), 700);
    EXPECT_GT(s.Get(Metric::kGpuTemp), 40);
    EXPECT_LT(s.Get(Metric::kGpuTemp), 90);
    EXPECT_EQ(s.Get(Metric::kMaxSmClock), 1980);
    EXPECT_GT(s.Get(Metric::kEnergyConsumption), 0);
    EXPECT_EQ(s.Get(Metric::kEccMode), 1);
    EXPECT_EQ(s.Get(Metric::kPcieLinkGenMax), 5);
    EXPECT_TRUE(s.Has(Metric::kMemoryTemp));
    EXPECT_TRUE(s.Has(Metric::kRemappedCorrectable));
    EXPECT_EQ(s.nvlink.size(), 18u);
    ASSERT_EQ(s.processes.size(), 1u);
    EXPECT_EQ(s.processes[0].name, "python3");
    EXPECT_FALSE(s.Has(Metric::kFanSpeed));  // SXM boards have no fan reading
    EXPECT_TRUE(s.Has(Metric::kBusySeconds));
  }
}

// A100: no GPM, so profiling metrics are absent (never 0), and PCIe rates come
// from nvmlDeviceGetPcieThroughput.
TEST(CollectSamplerTest, GpmMetricsAbsentOnA100PresentOnH100) {
  const std::string scenario_file = WriteTempFile("a100-h100.yaml", R"(
seed: 7
gpus:
  - model: a100-sxm
    workload:
      - {at: 0, kind: training, pcie_rx_mbps: 3000}
  - model: h100-sxm
    workload:
      - {at: 0, kind: training, pcie_rx_mbps: 3000}
)");
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", scenario_file);
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  sampler.SampleOnce(true);
  clock.now += 1;
  testing::SetSimTime(sampler, 1);
  SnapshotPtr snap = sampler.SampleOnce(true);
  ASSERT_TRUE(snap->nvml_up) << snap->nvml_error;
  ASSERT_EQ(snap->samples.size(), 2u);
  const GpuSample& a100 = snap->samples[0];
  const GpuSample& h100 = snap->samples[1];
  EXPECT_FALSE(snap->gpus[0].gpm_supported);
  for (Metric m : {Metric::kSmActive, Metric::kSmOccupancy, Metric::kTensorActive,
                   Metric::kDramActive, Metric::kSmActiveSeconds, Metric::kNvLinkTxBytesRate}) {
    EXPECT_FALSE(a100.Has(m)) << Def(m).key;
  }
  EXPECT_TRUE(a100.Has(Metric::kGpuUtil));
  EXPECT_NEAR(a100.Get(Metric::kPcieRxBytesRate), 3000e6, 3000e6 * 0.2);
  EXPECT_TRUE(h100.Has(Metric::kSmActive));
  EXPECT_TRUE(h100.Has(Metric::kDramActive));
  EXPECT_TRUE(h100.Has(Metric::kSmActiveSeconds));
  EXPECT_NEAR(h100.Get(Metric::kPcieRxBytesRate), 3000e6, 3000e6 * 0.2);
}

// A fast read sooner than 100 ms after the last GPM sample (jitter at -c 100)
// takes no GPM sample; the last GPM values carry over instead of vanishing,
// so the series never flicker.
TEST(CollectSamplerTest, GpmValuesCarryOverBetweenGpmSamples) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  sampler.SampleOnce(true);
  clock.now += 1;
  testing::SetSimTime(sampler, 1);
  SnapshotPtr sampled = sampler.SampleOnce(true);
  ASSERT_TRUE(sampled->samples[0].Has(Metric::kSmActive));
  clock.now += 0.05;  // too soon for the next GPM sample
  testing::SetSimTime(sampler, 1.05);
  SnapshotPtr soon = sampler.SampleOnce(true);
  for (Metric m : {Metric::kSmActive, Metric::kDramActive, Metric::kTensorActive,
                   Metric::kNvLinkTxBytesRate, Metric::kPcieRxBytesRate}) {
    ASSERT_TRUE(soon->samples[0].Has(m)) << Def(m).key;
    EXPECT_EQ(soon->samples[0].Get(m), sampled->samples[0].Get(m)) << Def(m).key;
  }
}

// Count of sim calls to one exported function, from the stats JSON.
uint64_t SimCalls(const std::string& stats, const std::string& function) {
  auto json = nlohmann::json::parse(stats, nullptr, false);
  if (json.is_discarded() || !json.contains("functions")) return 0;
  return json["functions"].value(function, uint64_t{0});
}

TEST(CollectSamplerTest, FieldValuesAreOneBatchPerGpuPerCycle) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  sampler.SampleOnce();
  const uint64_t before = SimCalls(control.Stats(), "nvmlDeviceGetFieldValues");
  ASSERT_GT(before, 0u);
  constexpr int kCycles = 12;  // crosses a slow (10 s) and PCIe (5 s) cycle
  for (int i = 0; i < kCycles; ++i) {
    clock.now += 1;
    SnapshotPtr snap = sampler.SampleOnce();
    ASSERT_TRUE(snap->nvml_up);
    EXPECT_TRUE(snap->samples[0].Has(Metric::kEnergyConsumption));
  }
  const uint64_t after = SimCalls(control.Stats(), "nvmlDeviceGetFieldValues");
  EXPECT_EQ(after - before, kCycles * 8u);
}

TEST(CollectSamplerTest, SlowTierValuesCarryForwardBetweenSlowCycles) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  SnapshotPtr first = sampler.SampleOnce();
  EXPECT_TRUE(first->slow_cycle);
  clock.now += 1;
  SnapshotPtr second = sampler.SampleOnce();
  EXPECT_FALSE(second->slow_cycle);
  EXPECT_LT(second->nvml_calls, first->nvml_calls);
  const GpuSample& s = second->samples[0];
  EXPECT_EQ(s.Get(Metric::kPowerLimit), 700);
  EXPECT_TRUE(s.Has(Metric::kEccSbeVolatile));
  EXPECT_EQ(s.nvlink.size(), 18u);
  EXPECT_EQ(s.processes.size(), 1u);
  clock.now += 10;
  EXPECT_TRUE(sampler.SampleOnce()->slow_cycle);
}

// Idle for 10 s, then fully busy: busy seconds equal the trapezoid integral
// of the sampled utilization, idle seconds count the idle stretch.
TEST(CollectSamplerTest, IntegralsFollowTheSampledSignal) {
  const std::string scenario_file = WriteTempFile("step.yaml", R"(
seed: 3
gpus:
  - model: h100-sxm
    workload:
      - {at: 0, kind: idle}
      - {at: 10, kind: training, util: 1.0}
)");
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", scenario_file);
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  ASSERT_TRUE(sampler.Open().ok());
  double expected_busy = 0, prev_util = -1, energy0 = -1, power_integral = 0, prev_power = 0;
  SnapshotPtr snap;
  for (int t = 0; t <= 30; ++t) {
    testing::SetSimTime(sampler, t);
    clock.now = 1'700'000'000.0 + t;
    snap = sampler.SampleOnce();
    const GpuSample& s = snap->samples[0];
    ASSERT_EQ(s.state, GpuState::kOk) << s.state_reason;
    const double util = s.Get(Metric::kGpuUtil), power = s.Get(Metric::kPowerUsage);
    if (prev_util >= 0) {
      expected_busy += (prev_util + util) / 200.0;
      power_integral += (prev_power + power) / 2.0;
    } else {
      energy0 = s.Get(Metric::kEnergyConsumption);
    }
    prev_util = util;
    prev_power = power;
  }
  const GpuSample& s = snap->samples[0];
  EXPECT_NEAR(s.Get(Metric::kBusySeconds), expected_busy, 1e-9);
  EXPECT_NEAR(s.Get(Metric::kBusySeconds), 20, 1.5);
  EXPECT_NEAR(s.Get(Metric::kIdleSeconds), 10, 1.5);
  EXPECT_TRUE(s.Has(Metric::kThrottleGpuIdle));
  EXPECT_GT(s.Get(Metric::kSmActiveSeconds), 0);
  // The driver's energy counter agrees with the integral of power draw.
  const double joules = (s.Get(Metric::kEnergyConsumption) - energy0) / 1000.0;
  EXPECT_NEAR(joules, power_integral, power_integral * 0.1);
  EXPECT_GE(s.Get(Metric::kMemoryUsedPeak), s.Get(Metric::kMemoryUsed));
  EXPECT_GE(s.Get(Metric::kGpuTempPeak), s.Get(Metric::kGpuTemp));
}

TEST(CollectSamplerTest, WindowStaysBounded) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ManualClock clock;
  SamplerOptions options = SimOptions();
  options.window_span_s = 5;
  options.devices = *ParseDcgmDevices("g:0");
  Sampler sampler(options, clock.AsClock());
  for (int i = 0; i < 40; ++i) {
    clock.now += 0.5;
    sampler.SampleOnce();
  }
  const auto points = sampler.window().Points(0);
  // Cycles 0.5 s apart (a 1 s cadence with its half-interval slack) are kept.
  EXPECT_GE(points.size(), 5u);
  EXPECT_LE(points.size(), 11u);
  EXPECT_LE(points.back().t - points.front().t, 5.0);
  EXPECT_EQ(points.back().t, clock.now);
  EXPECT_TRUE(points.back().Has(Metric::kGpuUtil));
}

TEST(CollectSamplerTest, MigInstancesSampleWhatTheyAnswer) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "mixed-node");
  Sampler sampler(SimOptions());
  SnapshotPtr snap = sampler.SampleOnce(true);
  ASSERT_TRUE(snap->nvml_up) << snap->nvml_error;
  int migs = 0;
  for (std::size_t i = 0; i < snap->gpus.size(); ++i) {
    const GpuSample& s = snap->samples[i];
    EXPECT_EQ(s.state, GpuState::kOk) << i << ": " << s.state_reason;
    if (!snap->gpus[i].is_mig()) continue;
    ++migs;
    EXPECT_TRUE(s.Has(Metric::kMemoryUsed));
    EXPECT_FALSE(s.Has(Metric::kGpuUtil));  // NVML has no utilization on MIG
    EXPECT_FALSE(s.Has(Metric::kBusySeconds));
  }
  EXPECT_EQ(migs, 3);
}

TEST(CollectSamplerTest, SelectsDevicesBySmiIds) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SamplerOptions options = SimOptions();
  options.devices = *ParseSmiIds("3,1");
  Sampler sampler(options);
  SnapshotPtr snap = sampler.SampleOnce();
  ASSERT_EQ(snap->gpus.size(), 2u);
  EXPECT_EQ(snap->gpus[0].index, 1u);
  EXPECT_EQ(snap->gpus[1].index, 3u);

  SamplerOptions bad = SimOptions();
  bad.devices = *ParseSmiIds("9");
  Sampler missing(bad);
  const Status status = missing.Open();
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("\"9\""));
}

TEST(CollectSamplerTest, PublishesOncePerCycle) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  Sampler sampler(SimOptions());
  std::vector<uint64_t> sequences;
  sampler.OnPublish([&](const SnapshotPtr& s) { sequences.push_back(s->sequence); });
  EXPECT_EQ(sampler.Latest()->sequence, 0u);
  sampler.SampleOnce();
  SnapshotPtr snap = sampler.SampleOnce();
  EXPECT_EQ(sequences, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(sampler.Latest(), snap);
  // XIDs are the health step's (serve/health.h), never the sampler's.
  EXPECT_TRUE(snap->samples[2].xid_counts.empty());
}

}  // namespace
}  // namespace gpuscope::collect
