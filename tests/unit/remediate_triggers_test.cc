// The remediation table (remediate/triggers.h): which findings act, parsing
// of --remediate-findings, and faults found in a cycle.
#include <gtest/gtest.h>

#include "remediate/triggers.h"

namespace gpuscope::remediate {
namespace {

struct Cycle {
  health::HealthReport report;
  Snapshot snapshot;
  health::GpuHealth& Gpu(unsigned i) {
    while (report.gpus.size() <= i) {
      health::GpuHealth g;
      g.gpu = g.slot = static_cast<unsigned>(report.gpus.size());
      g.uuid = "GPU-" + std::to_string(g.gpu);
      report.gpus.push_back(g);
      snapshot.samples.emplace_back();
      snapshot.gpus.emplace_back();
    }
    return report.gpus[i];
  }
  GpuSample& Sample(unsigned i) {
    Gpu(i);
    return snapshot.samples[i];
  }
  std::vector<Fault> Faults(const FindingSet& set = DefaultFindings()) const {
    return FindFaults(report, snapshot, set);
  }
};

TEST(Triggers, SeedCasesActByDefaultNvlinkOnlyWhenAsked) {
  const FindingSet d = DefaultFindings();
  for (Finding f : {Finding::kXid79, Finding::kGpuLost, Finding::kXid48, Finding::kXid94,
                    Finding::kXid95, Finding::kXid119, Finding::kXid120, Finding::kRowRemapFailure,
                    Finding::kRowRemapPending, Finding::kRecoveryReset, Finding::kRecoveryReboot}) {
    EXPECT_TRUE(d.contains(f)) << TriggerOf(f).name;
  }
  EXPECT_FALSE(d.contains(Finding::kNvlinkDown));
}

TEST(Triggers, NoThermalOrEfficiencyRow) {
  for (const Trigger& t : kTriggers) {
    for (std::string_view banned : {"therm", "power", "idle", "throttl", "bottleneck", "kpi"}) {
      EXPECT_EQ(t.name.find(banned), std::string_view::npos) << t.name;
    }
  }
}

TEST(Triggers, ThermalFailureDoesNotAct) {
  Cycle c;
  health::GpuHealth& g = c.Gpu(0);
  g.Get(health::Check::kThermal)
      .Raise(health::Verdict::kFail, "at the shutdown threshold", "cool it");
  g.Get(health::Check::kPower).Raise(health::Verdict::kFail, "brake", "check PSU");
  g.xid_window[43] = 5;  // an application XID
  g.xid_window[13] = 1;
  EXPECT_TRUE(c.Faults().empty());
}

TEST(Triggers, FindsEachSeedCase) {
  Cycle c;
  c.Gpu(0).xid_window[79] = 1;
  c.Gpu(0).lost = true;
  c.Gpu(1).xid_window[48] = 2;
  c.Sample(2).Set(Metric::kRemappedFailure, 1);
  c.Sample(3).Set(Metric::kRecoveryAction, 2);
  c.Sample(4).Set(Metric::kRecoveryAction, 1);
  c.Sample(5).Set(Metric::kRemappedPending, 1);
  c.Sample(6).Set(Metric::kRecoveryAction, 0);
  c.Sample(6).Set(Metric::kRemappedFailure, 0);
  c.Gpu(7).xid_window[119] = 1;
  const std::vector<Fault> f = c.Faults();
  std::vector<std::string> keys;
  for (const Fault& x : f) keys.push_back(x.Key());
  EXPECT_EQ(keys, (std::vector<std::string>{"xid_79/GPU-0", "gpu_lost/GPU-0", "xid_48/GPU-1",
                                            "row_remap_failure/GPU-2", "recovery_reboot/GPU-3",
                                            "recovery_reset/GPU-4", "row_remap_pending/GPU-5",
                                            "xid_119/GPU-7"}));
  EXPECT_EQ(f[0].Describe(), "XID 79 on GPU 0 (GPU-0)");
}

// After a planned reboot the links train: not a fault. A link still down
// past the training time is (nvlink_down, when enabled).
TEST(Triggers, NvlinkTrainingIsNoFaultALinkDownPastTrainingIs) {
  Cycle c;
  c.Gpu(0).nvlinks_not_up = {{0, false}, {1, false}};  // training
  EXPECT_TRUE(c.Faults({Finding::kNvlinkDown}).empty());
  c.Gpu(0).nvlinks_not_up = {{1, true}};  // stayed down past training
  const std::vector<Fault> f = c.Faults({Finding::kNvlinkDown});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding, Finding::kNvlinkDown);
}

TEST(Triggers, OnlyEnabledFindingsAct) {
  Cycle c;
  c.Gpu(0).xid_window[79] = 1;
  c.Gpu(0).lost = true;
  c.Gpu(1)
      .Get(health::Check::kNvlink)
      .Raise(health::Verdict::kWarn,
             "NVLink link 2 went down "
             "(was active)",
             "x");
  const std::vector<Fault> f = c.Faults({Finding::kGpuLost, Finding::kNvlinkDown});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].finding, Finding::kGpuLost);
  EXPECT_EQ(f[1].finding, Finding::kNvlinkDown);
  EXPECT_TRUE(c.Faults().size() == 2);  // default: xid_79 and gpu_lost, no nvlink
}

TEST(Triggers, ParseFindings) {
  EXPECT_EQ(*ParseFindings("default"), DefaultFindings());
  EXPECT_EQ(*ParseFindings(" xid_79 , gpu_lost"), (FindingSet{Finding::kXid79, Finding::kGpuLost}));
  Result<FindingSet> more = ParseFindings("default,nvlink_down");
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->contains(Finding::kNvlinkDown));
  EXPECT_TRUE(more->contains(Finding::kXid48));
  Result<FindingSet> bad = ParseFindings("xid_79,thermal_slowdown");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown finding 'thermal_slowdown'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("xid_79"), std::string::npos);
  EXPECT_FALSE(ParseFindings(" , ").ok());
}

// A GB200 GPU whose fabric cannot carry traffic acts only when named; a
// registration in progress or not yet started (a booting node) never acts.
TEST(Triggers, FabricUnusableOnlyWhenAskedAndNeverWhileRegistering) {
  Cycle c;
  auto fabric = [&](unsigned gpu, double state) -> GpuSample& {
    GpuSample& s = c.Sample(gpu);
    s.Set(Metric::kFabricState, state);
    s.Set(Metric::kFabricErrorCode, 0);
    s.Set(Metric::kFabricRouteUnhealthy, 0);
    s.Set(Metric::kFabricIncorrectConfig, 1);
    return s;
  };
  fabric(0, 3);                                           // healthy
  fabric(1, 3).Set(Metric::kFabricErrorCode, 999);        // registration failed
  fabric(2, 3).Set(Metric::kFabricRouteUnhealthy, 1);     // route unhealthy
  fabric(3, 3).Set(Metric::kFabricIncorrectConfig, 4);    // no partition
  fabric(4, 2);                                           // in progress: link training
  fabric(5, 1);                                           // not started yet
  fabric(6, 3).Set(Metric::kFabricDegradedBandwidth, 1);  // degraded: a warning only
  c.Sample(7);                                            // no fabric (an H100)
  EXPECT_TRUE(c.Faults().empty());
  auto named = ParseFindings("default,fabric_unusable");
  ASSERT_TRUE(named.ok());
  std::vector<std::string> keys;
  for (const Fault& x : c.Faults(*named)) keys.push_back(x.Key());
  EXPECT_EQ(keys, (std::vector<std::string>{"fabric_unusable/GPU-1", "fabric_unusable/GPU-2",
                                            "fabric_unusable/GPU-3"}));
  EXPECT_EQ(TriggerOf(Finding::kFabricUnusable).runbook, "GpuFabricUnhealthy.md");
}

}  // namespace
}  // namespace gpuscope::remediate
