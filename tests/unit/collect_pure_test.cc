// Pure logic of the collect layer: device selection, names, integrals,
// peaks, the trailing window, option validation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collect/integrals.h"
#include "collect/inventory.h"
#include "collect/sampler.h"
#include "collect/selection.h"
#include "gpuscope/window.h"

namespace gpuscope::collect {
namespace {

std::vector<GpuInfo> Node() {
  std::vector<GpuInfo> all(5);
  for (unsigned i = 0; i < 3; ++i) {
    all[i].index = i;
    all[i].uuid = "GPU-aaaa-" + std::to_string(i);
    all[i].pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
  }
  all[2].mig_enabled = true;
  for (unsigned k = 0; k < 2; ++k) {
    GpuInfo& mig = all[3 + k];
    mig = all[2];
    mig.gpu_instance_id = k + 1;
    mig.compute_instance_id = 0;
    mig.mig_uuid = "MIG-bbbb-" + std::to_string(k);
  }
  return all;
}

std::vector<std::size_t> Select(const std::string& dcgm) {
  auto sel = ParseDcgmDevices(dcgm);
  EXPECT_TRUE(sel.ok()) << sel.status().message();
  auto picked = SelectDevices(Node(), *sel);
  EXPECT_TRUE(picked.ok()) << picked.status().message();
  return picked.ok() ? *picked : std::vector<std::size_t>{};
}

TEST(CollectSelectionTest, DcgmDevicesFlag) {
  using V = std::vector<std::size_t>;
  EXPECT_EQ(Select("f"), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(Select("g"), (V{0, 1, 2}));
  EXPECT_EQ(Select("g:0,2"), (V{0, 2}));
  EXPECT_EQ(Select("g:1-2"), (V{1, 2}));
  EXPECT_EQ(Select("i"), (V{3, 4}));
  EXPECT_EQ(Select("i:1"), (V{4}));
  for (const char* bad : {"", "x", "g:", "g:a", "g:3-1", "gg"}) {
    EXPECT_FALSE(ParseDcgmDevices(bad).ok()) << bad;
  }
  auto missing = SelectDevices(Node(), *ParseDcgmDevices("g:7"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("7"));
}

TEST(CollectSelectionTest, SmiIdsByIndexUuidAndPciBusId) {
  using V = std::vector<std::size_t>;
  auto pick = [](const std::string& ids) {
    auto picked = SelectDevices(Node(), *ParseSmiIds(ids));
    EXPECT_TRUE(picked.ok()) << picked.status().message();
    return picked.ok() ? *picked : V{};
  };
  EXPECT_EQ(pick("1"), V{1});
  EXPECT_EQ(pick("2, 0"), (V{0, 2}));
  EXPECT_EQ(pick("gpu-AAAA-1"), V{1});
  EXPECT_EQ(pick("MIG-bbbb-1"), V{4});
  EXPECT_EQ(pick("00000000:10:00.0"), V{0});
  EXPECT_EQ(pick("0000:11:00.0"), V{1});
  EXPECT_EQ(pick("12:00.0"), V{2});
  EXPECT_FALSE(SelectDevices(Node(), *ParseSmiIds("GPU-nope")).ok());
  EXPECT_FALSE(ParseSmiIds("1,,2").ok());
  // The same list goes to an agent's id=: bounded, printable.
  EXPECT_EQ(ParseSmiIds("0\x1b[2J").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseSmiIds(std::string(kMaxSmiIdsChars + 1, '0')).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(ParseSmiIds(std::string(kMaxSmiIdsChars, '0')).ok());
  EXPECT_EQ(NormalizePciBusId("0000:1a:00.0"), "00000000:1A:00.0");
}

// health judges whole GPUs: there a MIG UUID selects the GPU that holds it.
TEST(CollectSelectionTest, MigUuidSelectsItsGpuForHealth) {
  using V = std::vector<std::size_t>;
  auto pick = [](const std::string& ids) {
    Result<DeviceSelection> sel = ParseSmiIds(ids);
    sel->mig_selects_gpu = true;
    auto picked = SelectDevices(Node(), *sel);
    EXPECT_TRUE(picked.ok()) << picked.status().message();
    return picked.ok() ? *picked : V{};
  };
  EXPECT_EQ(pick("MIG-bbbb-1"), V{2});
  EXPECT_EQ(pick("mig-BBBB-0,2,MIG-bbbb-1"), V{2});  // once
  EXPECT_EQ(pick("0,MIG-bbbb-0"), (V{0, 2}));
  std::vector<GpuInfo> instances_only = Node();
  instances_only.erase(instances_only.begin() + 2);  // no whole-GPU entry: the instance
  Result<DeviceSelection> sel = ParseSmiIds("MIG-bbbb-1");
  sel->mig_selects_gpu = true;
  EXPECT_EQ(*SelectDevices(instances_only, *sel), V{3});
  // There (an agent run with -d i), the GPU's own ids name it too, through its first instance:
  // health judges whole GPUs that no entry of the list is.
  for (const char* gpu : {"2", "GPU-aaaa-2", "12:00.0"}) {
    sel->ids = {gpu};
    EXPECT_EQ(*SelectDevices(instances_only, *sel), V{2}) << gpu;
  }
  sel->mig_selects_gpu = false;  // query's reading: an index is a whole GPU's entry
  EXPECT_EQ(SelectDevices(instances_only, *sel).status().message(),
            "no GPU matches id \"12:00.0\"");
  sel->ids = {"MIG-nope"};
  EXPECT_EQ(SelectDevices(Node(), *sel).status().message(), "no GPU matches id \"MIG-nope\"");
}

TEST(CollectInventoryNamesTest, MigProfileNames) {
  EXPECT_EQ(MigProfileName(1, 9984, 81559), "1g.10gb");  // H100 80GB
  EXPECT_EQ(MigProfileName(3, 40448, 81559), "3g.40gb");
  EXPECT_EQ(MigProfileName(7, 80896, 81559), "7g.80gb");
  EXPECT_EQ(MigProfileName(3, 71424, 143771), "3g.71gb");  // H200
  EXPECT_EQ(MigProfileName(7, 142848, 143771), "7g.141gb");
  EXPECT_EQ(MigProfileName(1, 23296, 183359), "1g.23gb");  // B200
  EXPECT_EQ(MigProfileName(1, 4864, 40536), "1g.5gb");     // A100 40GB
  EXPECT_EQ(MigProfileName(2, 9728, 0), "2g.10gb");        // parent size unknown
}

TEST(CollectInventoryNamesTest, EnumNames) {
  EXPECT_EQ(ArchitectureName(9), "Hopper");
  EXPECT_EQ(ArchitectureName(7), "Ampere");
  EXPECT_EQ(ArchitectureName(0xFFFFFFFF), "Unknown");
  EXPECT_EQ(BrandName(2), "Tesla");
  EXPECT_EQ(BrandName(14), "NVIDIA");
  EXPECT_EQ(BrandName(99), "Unknown");
  EXPECT_EQ(ComputeModeName(3), "Exclusive_Process");
}

TEST(CollectIntegralsTest, TrapezoidAndBreaks) {
  TrapezoidIntegral i;
  EXPECT_FALSE(i.total().has_value());
  i.Add(10, 0);
  EXPECT_EQ(i.total(), 0.0);
  i.Add(12, 1);  // (0 + 1) / 2 x 2
  EXPECT_DOUBLE_EQ(*i.total(), 1.0);
  i.Add(13, 1);
  EXPECT_DOUBLE_EQ(*i.total(), 2.0);
  i.Add(13, 5);  // same time: replaces, adds nothing
  EXPECT_DOUBLE_EQ(*i.total(), 2.0);
  i.Break();
  i.Add(100, 1);  // the gap is not integrated
  EXPECT_DOUBLE_EQ(*i.total(), 2.0);
  i.Add(101, 1);
  EXPECT_DOUBLE_EQ(*i.total(), 3.0);
}

TEST(CollectIntegralsTest, WindowMaxForgetsOldPeaks) {
  WindowMax peak(10);
  EXPECT_FALSE(peak.Max().has_value());
  peak.Add(0, 50);
  peak.Add(5, 30);
  EXPECT_EQ(peak.Max(), 50.0);
  peak.Add(11, 20);  // 50 at t=0 left the window
  EXPECT_EQ(peak.Max(), 30.0);
  peak.Add(16, 10);
  EXPECT_EQ(peak.Max(), 20.0);
}

GpuSample Sample(std::initializer_list<std::pair<Metric, double>> values) {
  GpuSample s;
  for (const auto& [m, v] : values) s.Set(m, v);
  return s;
}

TEST(CollectIntegralsTest, IntegratorBusyIdleThrottleAndPcie) {
  using enum Metric;
  Integrator integ(600);
  GpuSample out;
  integ.Update(0, Sample({{kGpuUtil, 0}, {kClockReasons, 0x1}, {kPcieTxBytesRate, 100}}), true,
               out);
  integ.Update(1, Sample({{kGpuUtil, 0}, {kClockReasons, 0x1}, {kPcieTxBytesRate, 300}}), true,
               out);
  integ.Update(3, Sample({{kGpuUtil, 50}, {kClockReasons, 0x4}}), true, out);
  // busy: 0 + (0 + 0.5) / 2 x 2; idle: 1 + (1 + 0) / 2 x 2.
  EXPECT_DOUBLE_EQ(out.Get(kBusySeconds), 0.5);
  EXPECT_DOUBLE_EQ(out.Get(kIdleSeconds), 2.0);
  EXPECT_DOUBLE_EQ(out.Get(kThrottleGpuIdle), 2.0);
  EXPECT_DOUBLE_EQ(out.Get(kThrottleSwPowerCap), 1.0);
  EXPECT_DOUBLE_EQ(out.Get(kThrottleHwThermal), 0.0);
  EXPECT_DOUBLE_EQ(out.Get(kPcieTxBytes), 200.0);
  EXPECT_FALSE(out.Has(kPcieRxBytes));      // never seen: absent, not 0
  EXPECT_FALSE(out.Has(kSmActiveSeconds));  // no GPM
  EXPECT_FALSE(out.Has(kEnergyConsumption));
}

TEST(CollectIntegralsTest, EnergyFromPowerWithoutCounter) {
  using enum Metric;
  Integrator integ(600);
  GpuSample out;
  integ.Update(0, Sample({{kPowerUsage, 100}, {kMemoryUsed, 5}, {kGpuTemp, 60}}), false, out);
  integ.Update(2, Sample({{kPowerUsage, 300}, {kMemoryUsed, 3}, {kGpuTemp, 70}}), false, out);
  EXPECT_DOUBLE_EQ(out.Get(kEnergyConsumption), 400.0 * 1000);  // mJ
  EXPECT_EQ(out.Get(kMemoryUsedPeak), 5);
  EXPECT_EQ(out.Get(kGpuTempPeak), 70);
}

TEST(CollectWindowTest, BoundedBySpanAndResolution) {
  Window window(Window::Options{10, 2});
  WindowPoint p;
  for (int i = 0; i <= 100; ++i) {
    p.t = i * 0.25;
    window.Append(1, p);
  }
  EXPECT_EQ(window.gpu_count(), 2u);
  const auto points = window.Points(1);
  EXPECT_LE(points.size(), 12u);
  EXPECT_GE(points.front().t, 25 - 10);
  EXPECT_EQ(points.back().t, 25);
  for (std::size_t i = 1; i + 1 < points.size(); ++i) {
    EXPECT_GE(points[i].t - points[i - 1].t, 1 - 1e-9);
  }
  EXPECT_EQ(window.Points(1, 20).front().t, 20);
  EXPECT_TRUE(window.Points(0).empty());
  EXPECT_TRUE(window.Points(5).empty());
}

TEST(CollectOptionsTest, Validation) {
  SamplerOptions ok;
  EXPECT_TRUE(ValidateOptions(ok).ok());
  SamplerOptions fast = ok;
  fast.fast_interval_s = 0.05;
  EXPECT_FALSE(ValidateOptions(fast).ok());
  SamplerOptions slow = ok;
  slow.slow_interval_s = 0.5;
  EXPECT_FALSE(ValidateOptions(slow).ok());
}

}  // namespace
}  // namespace gpuscope::collect
