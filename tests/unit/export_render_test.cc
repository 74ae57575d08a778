#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "export/render.h"
#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::Golden;
using testing::MakeGpu;
using testing::MakeSystem;

constexpr std::string_view kSmallCounters =
    "# test counters\n"
    "DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).\n"
    "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
    "DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).\n"
    "DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).\n"
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, Total energy consumption since boot (in mJ).\n"
    "DCGM_FI_DRIVER_VERSION, label, Driver Version\n"
    "DCGM_FI_PROF_DRAM_ACTIVE, gauge, Ratio of cycles the device memory interface is active.\n";

CounterSet SmallCounters() {
  Result<CounterSet> set = ParseCounters(kSmallCounters, "small.csv");
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? std::move(set).value() : CounterSet{};
}

RenderOptions Options(MetricSet metrics = MetricSet::kBoth) {
  RenderOptions options;
  options.metrics = metrics;
  options.counters = SmallCounters();
  options.profile = Profile::kFull;  // every family (the lean one: export_profile_test)
  return options;
}

// Slot order differs from GPU order on purpose: GPU 1, GPU 0, a MIG instance of GPU 0.
Snapshot SmallSnapshot() {
  Snapshot snapshot;
  snapshot.system = MakeSystem();
  snapshot.gpus.push_back(MakeGpu(1, "GPU-bbbb", "NVIDIA H100 80GB HBM3"));
  snapshot.gpus.push_back(MakeGpu(0, "GPU-aaaa", "NVIDIA H100 80GB HBM3"));
  GpuInfo mig = MakeGpu(0, "GPU-aaaa", "NVIDIA H100 80GB HBM3");
  mig.gpu_instance_id = 9;
  mig.mig_uuid = "MIG-cccc";
  mig.mig_profile = "1g.10gb";
  snapshot.gpus.push_back(mig);

  GpuSample gpu1;
  gpu1.Set(Metric::kGpuUtil, 45);
  gpu1.Set(Metric::kMemoryUsed, 1610612737);  // 1.5 GiB + 1 byte -> 1536 MiB
  gpu1.Set(Metric::kPowerUsage, 69.85);
  gpu1.Set(Metric::kEnergyConsumption, 123456789);
  gpu1.Set(Metric::kTensorActive, 0.001);  // percent -> 1e-05
  gpu1.Set(Metric::kFp64Active, 10);       // percent -> 0.1
  gpu1.sampled_at = 1700000000.5;
  gpu1.nvlink.push_back({1, true, 3, 0, std::nullopt, 1});
  gpu1.nvlink.push_back({0, false, 0, std::nullopt, std::nullopt, std::nullopt});
  gpu1.xid_counts = {{79, 1}, {13, 4}};

  GpuSample gpu0;
  gpu0.Set(Metric::kGpuUtil, 100);
  gpu0.Set(Metric::kPowerUsage, 300);
  gpu0.sampled_at = 1700000000;

  GpuSample instance;
  instance.Set(Metric::kDramActive, 12.5);
  instance.sampled_at = 1700000000;

  snapshot.samples = {gpu1, gpu0, instance};
  return snapshot;
}

TEST(Render, GoldenText) {
  Renderer renderer(Options());
  Bodies bodies = renderer.Render(SmallSnapshot());
  EXPECT_EQ(*bodies.text, Golden("tests/golden/export_small.prom", *bodies.text));
}

TEST(Render, GoldenOpenMetrics) {
  Renderer renderer(Options());
  Bodies bodies = renderer.Render(SmallSnapshot());
  EXPECT_EQ(*bodies.openmetrics, Golden("tests/golden/export_small.om", *bodies.openmetrics));
}

// One GPU with everything on: every family name and type, in both formats.
// tests/integration/test_export_openmetrics.py has Prometheus scrape these.
TEST(Render, GoldenFullGpu) {
  Renderer renderer(testing::AllCounters(MetricSet::kBoth));
  Snapshot snapshot = testing::FullSnapshot(1);
  snapshot.gpus[0].name = "Odd \"model\" \\ name";
  std::vector<Family> extra = {{"gpuscope_collector_up",
                                "1 when \"the\" collector works.",
                                FamilyType::kGauge,
                                LabelBase::kNone,
                                {{-1, {{"collector", "nvml"}}, 1}}}};
  Bodies bodies = renderer.Render(snapshot, extra);
  EXPECT_EQ(*bodies.text, Golden("tests/golden/export_full_gpu.prom", *bodies.text));
  EXPECT_EQ(*bodies.openmetrics, Golden("tests/golden/export_full_gpu.om", *bodies.openmetrics));
}

TEST(Render, OneFormatEqualsBoth) {
  Renderer both(Options()), single(Options());
  Snapshot snapshot = SmallSnapshot();
  Bodies bodies = both.Render(snapshot);
  EXPECT_EQ(*single.Render(snapshot, {}, Format::kText), *bodies.text);
  EXPECT_EQ(*single.Render(snapshot, {}, Format::kOpenMetrics), *bodies.openmetrics);
}

TEST(Render, StableAcrossCycles) {
  Renderer renderer(Options());
  Snapshot snapshot = SmallSnapshot();
  std::string first = *renderer.Render(snapshot).text;
  EXPECT_EQ(*renderer.Render(snapshot).text, first);
  EXPECT_EQ(*renderer.Render(snapshot).text, first);
}

TEST(Render, ReusesOnlyReleasedBodies) {
  Renderer renderer(Options());
  Snapshot snapshot = SmallSnapshot();
  std::shared_ptr<const std::string> held = renderer.Render(snapshot).text;
  const std::string expected = *held;
  const std::string* address = held.get();
  // While a reader holds a body, new cycles must not write into it.
  for (int i = 0; i < 5; ++i) {
    snapshot.samples[0].Set(Metric::kGpuUtil, i);
    std::shared_ptr<const std::string> next = renderer.Render(snapshot).text;
    EXPECT_NE(next.get(), address);
  }
  EXPECT_EQ(*held, expected);
  held.reset();
  // Released bodies come back: the pool stays small.
  std::set<const std::string*> seen;
  for (int i = 0; i < 10; ++i) seen.insert(renderer.Render(snapshot).text.get());
  EXPECT_LE(seen.size(), 3u);
}

TEST(Render, OpenMetricsEndsWithEofAndRenamesCounters) {
  Renderer renderer(Options());
  std::string om = *renderer.Render(SmallSnapshot()).openmetrics;
  ASSERT_GE(om.size(), 6u);
  EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
  EXPECT_NE(om.find("# TYPE gpuscope_energy_joules counter\n"), std::string::npos);
  EXPECT_NE(om.find("\ngpuscope_energy_joules_total{"), std::string::npos);
  EXPECT_NE(om.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n"), std::string::npos);
  std::string text = *renderer.Render(SmallSnapshot()).text;
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_NE(text.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"), std::string::npos);
}

TEST(Render, AbsentMetricsAndEmptyFamiliesAreOmitted) {
  Renderer renderer(Options());
  std::string text = *renderer.Render(SmallSnapshot()).text;
  // GPU_TEMP is in the counters file but no GPU has it: no HELP, no TYPE, no series.
  EXPECT_EQ(text.find("DCGM_FI_DEV_GPU_TEMP"), std::string::npos);
  EXPECT_EQ(text.find("gpuscope_gpu_temperature_celsius"), std::string::npos);
  // GPU 0 has no memory reading: one FB_USED series only (GPU 1's).
  EXPECT_EQ(text.find("DCGM_FI_DEV_FB_USED{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED{gpu=\"1\""), std::string::npos);
}

TEST(Render, IntegerDcgmFieldsAndShortestDoubles) {
  Renderer renderer(Options());
  std::string text = *renderer.Render(SmallSnapshot()).text;
  EXPECT_NE(text.find("DCGM_FI_DRIVER_VERSION=\"570.133.20\"} 1536\n"), std::string::npos);
  EXPECT_NE(text.find("} 69.85\n"), std::string::npos);
  EXPECT_NE(text.find("pipe=\"tensor\"} 1e-05\n"), std::string::npos);
  EXPECT_NE(text.find("pipe=\"fp64\"} 0.1\n"), std::string::npos);
  EXPECT_NE(text.find("} 123456789\n"), std::string::npos);   // dcgm mJ
  EXPECT_NE(text.find("} 123456.789\n"), std::string::npos);  // native J
  EXPECT_NE(text.find("} 1610612737\n"), std::string::npos);  // native bytes
}

TEST(Render, LabelValuesAreEscaped) {
  Snapshot snapshot = SmallSnapshot();
  snapshot.gpus[0].name = "Quote\" Back\\slash\nNewline";
  snapshot.system.hostname = "h\"ost";
  Renderer renderer(Options());
  Bodies bodies = renderer.Render(snapshot);
  EXPECT_NE(bodies.text->find(R"(modelName="Quote\" Back\\slash\nNewline",Hostname="h\"ost")"),
            std::string::npos);
  EXPECT_NE(bodies.openmetrics->find(R"(name="Quote\" Back\\slash\nNewline")"), std::string::npos);
}

TEST(Render, HostnameOptions) {
  RenderOptions options = Options(MetricSet::kDcgm);
  options.hostname_label = "hostname";
  std::string renamed = *Renderer(options).Render(SmallSnapshot()).text;
  EXPECT_NE(renamed.find(",hostname=\"node-1\","), std::string::npos);
  EXPECT_EQ(renamed.find("Hostname="), std::string::npos);

  options.no_hostname = true;
  std::string none = *Renderer(options).Render(SmallSnapshot()).text;
  EXPECT_EQ(none.find("ostname="), std::string::npos);
  EXPECT_NE(none.find("modelName=\"NVIDIA H100 80GB HBM3\",DCGM_FI_DRIVER_VERSION="),
            std::string::npos);
}

TEST(Render, MetricSets) {
  std::string dcgm = *Renderer(Options(MetricSet::kDcgm)).Render(SmallSnapshot()).text;
  EXPECT_NE(dcgm.find("DCGM_FI_DEV_GPU_UTIL{"), std::string::npos);
  EXPECT_EQ(dcgm.find("gpuscope_"), std::string::npos);
  std::string native = *Renderer(Options(MetricSet::kNative)).Render(SmallSnapshot()).text;
  EXPECT_EQ(native.find("DCGM_"), std::string::npos);
  EXPECT_NE(native.find("gpuscope_gpu_utilization_ratio{"), std::string::npos);
}

TEST(Render, LostGpuKeepsIdentityOnlyStaleKeepsValues) {
  Snapshot snapshot = SmallSnapshot();
  snapshot.samples[0].state = GpuState::kLost;   // GPU 1
  snapshot.samples[1].state = GpuState::kStale;  // GPU 0
  std::string text = *Renderer(Options()).Render(snapshot).text;
  EXPECT_EQ(text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("gpuscope_gpu_utilization_ratio{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("gpuscope_nvlink_link_errors_total{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_lost{gpu=\"1\",uuid=\"GPU-bbbb\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_info{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("gpuscope_xid_errors_total{gpu=\"1\",uuid=\"GPU-bbbb\",xid=\"79\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_utilization_ratio{gpu=\"0\""), std::string::npos);
  // Staleness is the health module's gpuscope_collector_stale, not the renderer's.
  EXPECT_EQ(text.find("_stale"), std::string::npos);
}

TEST(Render, InventoryChangeRebuildsLabels) {
  Renderer renderer(Options());
  Snapshot snapshot = SmallSnapshot();
  renderer.Render(snapshot);
  snapshot.gpus[0].name = "NVIDIA A100-SXM4-40GB";
  snapshot.system.driver_version = "580.1";
  std::string text = *renderer.Render(snapshot).text;
  EXPECT_NE(text.find("modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"node-1\","
                      "DCGM_FI_DRIVER_VERSION=\"580.1\""),
            std::string::npos);
  snapshot.gpus.pop_back();
  snapshot.samples.pop_back();
  text = *renderer.Render(snapshot).text;
  EXPECT_EQ(text.find("MIG-cccc"), std::string::npos);
}

TEST(Render, MismatchedSampleCountIsSafe) {
  Snapshot snapshot = SmallSnapshot();
  snapshot.samples.pop_back();  // the MIG instance has no sample
  std::string text = *Renderer(Options()).Render(snapshot).text;
  EXPECT_EQ(text.find("DCGM_FI_PROF_DRAM_ACTIVE"), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_info{gpu=\"0\",uuid=\"MIG-cccc\""), std::string::npos);
}

Family XidWindowFamily() {
  Family family{
      "DCGM_EXP_XID_ERRORS_COUNT", "XIDs in the window", FamilyType::kGauge, LabelBase::kDcgm, {}};
  family.samples.push_back({0, {{"xid", "79"}, {"window_size_in_ms", "300000"}}, 1});
  family.samples.push_back({1, {{"xid", "43"}, {"window_size_in_ms", "300000"}}, 2});
  family.samples.push_back({1, {{"xid", "13"}, {"window_size_in_ms", "300000"}}, 3});
  return family;
}

TEST(Render, ExtraFamiliesShareLabelsAndSortByGpuThenLabels) {
  std::vector<Family> extra = {XidWindowFamily()};
  extra.push_back({"gpuscope_collector_up",
                   "1 when the collector works.",
                   FamilyType::kGauge,
                   LabelBase::kNone,
                   {{-1, {{"collector", "nvml"}}, 1}, {-1, {}, 0.5}}});
  extra.push_back({"gpuscope_bottleneck",
                   "Verdict \\ \"x\"",
                   FamilyType::kGauge,
                   LabelBase::kNative,
                   {{1, {{"kind", "idle"}}, 1}}});
  extra.push_back({"gpuscope_empty", "No samples.", FamilyType::kGauge, LabelBase::kNone, {}});
  std::string text = *Renderer(Options()).Render(SmallSnapshot(), extra).text;
  std::string_view expected =
      "# HELP DCGM_EXP_XID_ERRORS_COUNT XIDs in the window\n"
      "# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:10:00.0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\","
      "DCGM_FI_DRIVER_VERSION=\"570.133.20\",xid=\"13\",window_size_in_ms=\"300000\"} 3\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:10:00.0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\","
      "DCGM_FI_DRIVER_VERSION=\"570.133.20\",xid=\"43\",window_size_in_ms=\"300000\"} 2\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"1\",UUID=\"GPU-bbbb\",pci_bus_id=\"00000000:11:00.0\","
      "device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\","
      "DCGM_FI_DRIVER_VERSION=\"570.133.20\",xid=\"79\",window_size_in_ms=\"300000\"} 1\n"
      "# HELP gpuscope_collector_up 1 when the collector works.\n"
      "# TYPE gpuscope_collector_up gauge\n"
      "gpuscope_collector_up 0.5\n"
      "gpuscope_collector_up{collector=\"nvml\"} 1\n"
      "# HELP gpuscope_bottleneck Verdict \\\\ \"x\"\n"
      "# TYPE gpuscope_bottleneck gauge\n"
      "gpuscope_bottleneck{gpu=\"0\",uuid=\"GPU-aaaa\",kind=\"idle\"} 1\n";
  ASSERT_NE(text.find("# HELP DCGM_EXP"), std::string::npos);
  EXPECT_EQ(text.substr(text.find("# HELP DCGM_EXP")), expected);

  std::string om = *Renderer(Options()).Render(SmallSnapshot(), extra).openmetrics;
  EXPECT_NE(om.find("# HELP gpuscope_bottleneck Verdict \\\\ \\\"x\\\"\n"), std::string::npos);

  std::string native = *Renderer(Options(MetricSet::kNative)).Render(SmallSnapshot(), extra).text;
  EXPECT_EQ(native.find("DCGM_EXP_XID_ERRORS_COUNT"), std::string::npos);
  EXPECT_NE(native.find("gpuscope_collector_up"), std::string::npos);
  std::string dcgm = *Renderer(Options(MetricSet::kDcgm)).Render(SmallSnapshot(), extra).text;
  EXPECT_EQ(dcgm.find("gpuscope_bottleneck"), std::string::npos);
  EXPECT_NE(dcgm.find("gpuscope_collector_up"), std::string::npos);
}

TEST(Render, ParsesMetricSet) {
  EXPECT_EQ(ParseMetricSet("both"), MetricSet::kBoth);
  EXPECT_EQ(ParseMetricSet("dcgm"), MetricSet::kDcgm);
  EXPECT_EQ(ParseMetricSet("native"), MetricSet::kNative);
  EXPECT_FALSE(ParseMetricSet("all"));
}

TEST(Render, DefaultOptionsUseTheDefaultCounters) {
  RenderOptions options;
  EXPECT_EQ(options.metrics, MetricSet::kBoth);
  EXPECT_EQ(options.hostname_label, "Hostname");
  EXPECT_NE(options.counters.Find("DCGM_FI_PROF_PCIE_RX_BYTES"), nullptr);
}

}  // namespace
}  // namespace gpuscope::prom
