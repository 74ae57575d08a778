#include <gtest/gtest.h>

#include "health/checks.h"
#include "health_test_util.h"

namespace gpuscope::health {
namespace {

using testing::Dump;
using testing::HasEvidence;
using testing::HealthyNode;
using testing::kNow;

class EvaluateTest : public ::testing::Test {
 protected:
  HealthReport Run(const Snapshot& snap, double now = kNow) {
    return Evaluate(snap, events_, state_, now, options_);
  }
  GpuSample& Sample(unsigned i = 0) { return snap_.samples[i]; }
  const CheckResult& Result(const HealthReport& r, Check c, unsigned gpu = 0) {
    return r.gpus.at(gpu).Get(c);
  }

  Snapshot snap_ = HealthyNode(2);
  EventState events_;
  HealthState state_;
  HealthOptions options_;
};

TEST_F(EvaluateTest, HealthyNodeIsOkEverywhere) {
  events_.running = true;
  events_.gpus[0].registered_mask = 0xF;
  HealthReport r = Run(snap_);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_EQ(r.hostname, "node-a");
  for (Check c : {Check::kMemory, Check::kPcie, Check::kThermal, Check::kPower, Check::kDriver}) {
    EXPECT_TRUE(Result(r, c).evaluated) << CheckName(c);
    EXPECT_EQ(Result(r, c).verdict, Verdict::kOk) << CheckName(c) << Dump(Result(r, c));
  }
  EXPECT_TRUE(Result(r, Check::kXid).evaluated);      // registered with the event thread
  EXPECT_FALSE(Result(r, Check::kXid, 1).evaluated);  // GPU 1 has no event registration
  EXPECT_FALSE(Result(r, Check::kNvlink).evaluated);  // no NVLink data: not judged, not 0
  EXPECT_EQ(r.gpus[1].device, "nvidia1");
  EXPECT_EQ(r.gpus[1].slot, 1u);
}

TEST_F(EvaluateTest, DoubleBitEccFails) {
  Sample().Set(Metric::kEccDbeVolatile, 2);
  HealthReport r = Run(snap_);
  const CheckResult& m = Result(r, Check::kMemory);
  EXPECT_EQ(m.verdict, Verdict::kFail) << Dump(m);
  EXPECT_TRUE(HasEvidence(m, "double-bit) ECC errors since the driver loaded: 2")) << Dump(m);
  EXPECT_NE(m.action.find("XID 48"), std::string::npos);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::kFail);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::kOk);
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

TEST_F(EvaluateTest, RowRemapPendingWarnsFailureFails) {
  Sample(0).Set(Metric::kRemappedPending, 1);
  Sample(1).Set(Metric::kRemappedFailure, 1);
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kMemory, 0).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kMemory, 0), "row remap pending"));
  EXPECT_EQ(Result(r, Check::kMemory, 1).verdict, Verdict::kFail);
  EXPECT_NE(Result(r, Check::kMemory, 1).action.find("RMA"), std::string::npos);
}

TEST_F(EvaluateTest, UncorrectableRemappedRowsThreshold) {
  Sample(0).Set(Metric::kRemappedUncorrectable, 511);
  Sample(1).Set(Metric::kRemappedUncorrectable, 512);
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kMemory, 0).verdict, Verdict::kOk);
  EXPECT_EQ(Result(r, Check::kMemory, 1).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kMemory, 1), "512 >= 512"));
}

TEST_F(EvaluateTest, RetiredPagesThresholds) {
  Sample(0).Set(Metric::kRetiredSbe, 50);
  Sample(0).Set(Metric::kRetiredDbe, 13);  // 63 in total
  Sample(1).Set(Metric::kRetiredSbe, 0);
  Sample(1).Set(Metric::kRetiredDbe, 16);  // > 15 double-bit
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kMemory, 0).verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kMemory, 0), "retired pages 63"));
  EXPECT_EQ(Result(r, Check::kMemory, 1).verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kMemory, 1), "double-bit 16 > 15"));

  Snapshot few = HealthyNode(1);
  few.samples[0].Set(Metric::kRetiredSbe, 10);
  few.samples[0].Set(Metric::kRetiredDbe, 2);
  few.samples[0].Set(Metric::kRetiredPending, 1);
  r = Run(few);
  EXPECT_EQ(Result(r, Check::kMemory).verdict, Verdict::kWarn) << Dump(Result(r, Check::kMemory));
  EXPECT_TRUE(HasEvidence(Result(r, Check::kMemory), "page retirement pending"));
}

TEST_F(EvaluateTest, AbsentMetricsAreNotZero) {
  GpuSample bare;
  bare.sampled_at = kNow;
  snap_.samples[0] = bare;
  HealthReport r = Run(snap_);
  for (Check c : {Check::kMemory, Check::kPcie, Check::kNvlink, Check::kThermal, Check::kPower}) {
    EXPECT_FALSE(Result(r, c).evaluated) << CheckName(c);
  }
  EXPECT_TRUE(Result(r, Check::kDriver).evaluated);
}

TEST_F(EvaluateTest, PcieReplayRateAgainstGenerationLimit) {
  // Gen3 x16: limit ceil(0.48 x 16) = 8 per minute.
  for (GpuSample& s : snap_.samples) {
    s.Set(Metric::kPcieLinkGen, 3);
    s.Set(Metric::kPcieLinkGenMax, 3);
  }
  Sample(0).Set(Metric::kPcieReplays, 100);
  Sample(1).Set(Metric::kPcieReplays, 100);
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kPcie).verdict, Verdict::kOk);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kPcie), "a rate needs a later sample"));
  // One minute later: GPU 0 +8 (at the limit, ok), GPU 1 +9 (above).
  Sample(0).Set(Metric::kPcieReplays, 108);
  Sample(1).Set(Metric::kPcieReplays, 109);
  r = Run(snap_, kNow + 60);
  EXPECT_EQ(Result(r, Check::kPcie, 0).verdict, Verdict::kOk) << Dump(Result(r, Check::kPcie, 0));
  EXPECT_TRUE(
      HasEvidence(Result(r, Check::kPcie, 0), "PCIe replays 8.0/min, limit 8/min (Gen3 x16"));
  EXPECT_EQ(Result(r, Check::kPcie, 1).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kPcie, 1), "PCIe replays 9.0/min, limit 8/min"))
      << Dump(Result(r, Check::kPcie, 1));
}

TEST_F(EvaluateTest, PcieReplayLimitUsesCurrentLinkAndWidthDowngradeWarns) {
  Sample().Set(Metric::kPcieReplays, 0);
  Run(snap_);
  // Gen5 x16 would allow 31/min; the link trained down to Gen3 x8: limit 4/min.
  Sample().Set(Metric::kPcieLinkGen, 3);
  Sample().Set(Metric::kPcieLinkWidth, 8);
  Sample().Set(Metric::kPcieReplays, 10);
  HealthReport r = Run(snap_, kNow + 60);
  const CheckResult& p = Result(r, Check::kPcie);
  EXPECT_EQ(p.verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(p, "limit 4/min (Gen3 x8")) << Dump(p);
  EXPECT_TRUE(HasEvidence(p, "PCIe link x8 is narrower than its maximum x16")) << Dump(p);
}

TEST_F(EvaluateTest, NvlinkReplayOrRecoveryIncreaseFails) {
  NvLinkLink l0{0, true, 0, 0, 0, 0};
  NvLinkLink l1{1, true, 0, 0, 0, 0};
  Sample().nvlink = {l0, l1};
  HealthReport r = Run(snap_);
  EXPECT_TRUE(Result(r, Check::kNvlink).evaluated);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "2 of 2 NVLinks active"));
  Sample().nvlink[1].recovery = 1;
  r = Run(snap_, kNow + 10);
  const CheckResult& n = Result(r, Check::kNvlink);
  EXPECT_EQ(n.verdict, Verdict::kFail) << Dump(n);
  EXPECT_TRUE(HasEvidence(n, "NVLink link 1: recovery errors +1")) << Dump(n);
  // Long after the increase the link is ok again, with the total noted.
  r = Run(snap_, kNow + 10 + options_.recent_error_seconds + 1);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "1 recovery errors in total"));
}

TEST_F(EvaluateTest, NvlinkCrcRateWarnsAt100PerSecond) {
  NvLinkLink l0{0, true, 0, 0, 0, 0};
  Sample().nvlink = {l0};
  Run(snap_);
  Sample().nvlink[0].crc_flit = 600;
  Sample().nvlink[0].crc_data = 390;  // 990 in 10 s: 99/s
  HealthReport r = Run(snap_, kNow + 10);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk) << Dump(Result(r, Check::kNvlink));
  Sample().nvlink[0].crc_flit = 1600;  // 1990 in 20 s: 99.5/s
  Sample().nvlink[0].crc_data = 1400;  // 3000 in 20 s: 150/s
  r = Run(snap_, kNow + 20);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "CRC errors 150.0/s >= 100/s"))
      << Dump(Result(r, Check::kNvlink));
}

TEST_F(EvaluateTest, NvlinkLinkGoingDownWarns) {
  Sample().nvlink = {NvLinkLink{0, true}, NvLinkLink{1, true}};
  Run(snap_);
  Sample().nvlink[1].active = false;
  HealthReport r = Run(snap_, kNow + 1);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "link 1 went down"));
  ASSERT_EQ(r.gpus[0].nvlinks_not_up.size(), 1u);
  EXPECT_TRUE(r.gpus[0].nvlinks_not_up[0].second);  // down at once: it was up
}

// A planned reboot: gpuscope starts with the GPU, its links train up over
// about a minute. Nothing warns, and the links not up yet read 0 (training).
TEST_F(EvaluateTest, NvlinkLinksTrainingAfterTheGpuCameUpDoNotWarn) {
  Sample().nvlink = {NvLinkLink{0, false}, NvLinkLink{1, false}};
  for (double t = 0; t < 60; t += 10) {
    HealthReport r = Run(snap_, kNow + t);
    EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk) << Dump(Result(r, Check::kNvlink));
    EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "link 1 training"));
    EXPECT_EQ(r.gpus[0].up_since, kNow);
    ASSERT_EQ(r.gpus[0].nvlinks_not_up.size(), 2u);
    EXPECT_FALSE(r.gpus[0].nvlinks_not_up[1].second);
  }
  Sample().nvlink = {NvLinkLink{0, true}, NvLinkLink{1, true}};  // trained at 60 s
  HealthReport r = Run(snap_, kNow + 60);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk);
  EXPECT_TRUE(r.gpus[0].nvlinks_not_up.empty());
}

// A link that never trains is down once the training time has passed.
TEST_F(EvaluateTest, NvlinkLinkStillDownPastTrainingWarns) {
  Sample().nvlink = {NvLinkLink{0, false}, NvLinkLink{1, false}};
  Run(snap_);
  Sample().nvlink[0].active = true;  // link 0 trains, link 1 never does
  HealthReport r = Run(snap_, kNow + options_.nvlink_training_seconds - 1);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk);
  r = Run(snap_, kNow + options_.nvlink_training_seconds);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kWarn);
  EXPECT_TRUE(
      HasEvidence(Result(r, Check::kNvlink),
                  "link 1 stayed down 180 s after the GPU came up (links train within 180 s)"))
      << Dump(Result(r, Check::kNvlink));
  ASSERT_EQ(r.gpus[0].nvlinks_not_up.size(), 1u);
  EXPECT_EQ(r.gpus[0].nvlinks_not_up[0], std::make_pair(1u, true));
}

// A GPU reset (lost, then back): its links train again without a warning,
// though they were up before.
TEST_F(EvaluateTest, NvlinkLinksTrainAgainAfterTheGpuWasLost) {
  Sample().nvlink = {NvLinkLink{0, true}};
  Run(snap_);
  Sample().state = GpuState::kLost;
  Run(snap_, kNow + 500);
  Sample().state = GpuState::kOk;
  Sample().nvlink[0].active = false;
  HealthReport r = Run(snap_, kNow + 520);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kOk) << Dump(Result(r, Check::kNvlink));
  EXPECT_EQ(r.gpus[0].up_since, kNow + 520);
  r = Run(snap_, kNow + 520 + options_.nvlink_training_seconds);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kWarn);
}

TEST_F(EvaluateTest, NvlinkTotalsWhenNoPerLinkData) {
  Sample().Set(Metric::kNvLinkReplayErrors, 5);
  Run(snap_);
  Sample().Set(Metric::kNvLinkReplayErrors, 7);
  HealthReport r = Run(snap_, kNow + 10);
  EXPECT_EQ(Result(r, Check::kNvlink).verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kNvlink), "all links: replay errors +2"));
}

TEST_F(EvaluateTest, ThermalSlowdownAndThresholds) {
  Sample(0).Set(Metric::kGpuTemp, 84);  // within 5 C of 87
  Sample(1).Set(Metric::kClockReasons, 0x40 | 0x8);
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kThermal, 0).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kThermal, 0),
                          "GPU temperature 84 C, slowdown threshold 87 C (warn at >= 82 C)"))
      << Dump(Result(r, Check::kThermal, 0));
  EXPECT_EQ(Result(r, Check::kThermal, 1).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kThermal, 1), "HW thermal slowdown active"));
  // HW slowdown with the thermal bit is thermal, not a power problem.
  EXPECT_EQ(Result(r, Check::kPower, 1).verdict, Verdict::kOk) << Dump(Result(r, Check::kPower, 1));

  Sample(0).Set(Metric::kGpuTemp, 89);  // above slowdown, 3 C below shutdown: still a warning
  r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kThermal, 0).verdict, Verdict::kWarn);
  Sample(0).Set(Metric::kGpuTemp, 90);  // within 2 C of shutdown at 92
  r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kThermal, 0).verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kThermal, 0),
                          "GPU temperature 90 C within 2 C of the shutdown threshold 92 C"));
}

TEST_F(EvaluateTest, PowerBrakeWarns) {
  Sample().Set(Metric::kClockReasons, 0x80 | 0x8);
  Sample().Set(Metric::kThrottleHwPowerBrake, 12.5);
  HealthReport r = Run(snap_);
  const CheckResult& p = Result(r, Check::kPower);
  EXPECT_EQ(p.verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(p, "HW power brake active"));
  EXPECT_TRUE(HasEvidence(p, "HW power brake for 12.5 s since start"));
  EXPECT_TRUE(HasEvidence(p, "power draw 300.0 W, limit 700 W"));
  EXPECT_EQ(Result(r, Check::kThermal).verdict, Verdict::kOk);
}

TEST_F(EvaluateTest, XidSeverityWithinWindow) {
  events_.running = true;
  GpuEvents& g0 = events_.gpus[0];
  g0.xid_counts = {{13, 2}, {79, 1}};
  g0.recent = {{kNow - 10, 13}, {kNow - 5, 13}, {kNow - 1, 79}};
  g0.last_xid = 79;
  GpuEvents& g1 = events_.gpus[1];
  g1.xid_counts = {{43, 1}, {31, 1}};
  g1.recent = {{kNow - 3, 43}, {kNow - 2, 31}};
  HealthReport r = Run(snap_);
  const CheckResult& x0 = Result(r, Check::kXid, 0);
  EXPECT_EQ(x0.verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(x0, "XID 79 (fallen off the bus) x1 in the last 300 s: critical"))
      << Dump(x0);
  EXPECT_TRUE(HasEvidence(x0, "XID 13 (graphics engine exception) x2"));
  EXPECT_NE(x0.action.find("XID 79"), std::string::npos) << x0.action;
  const CheckResult& x1 = Result(r, Check::kXid, 1);
  EXPECT_EQ(x1.verdict, Verdict::kWarn);  // 31 warns; 43 is info
  EXPECT_TRUE(HasEvidence(x1, "usually the application"));
  EXPECT_EQ(r.gpus[0].xid_totals.at(13), 2u);
  EXPECT_EQ(r.gpus[0].xid_window.at(13), 2u);
  EXPECT_EQ(r.gpus[0].last_xid, 79u);
}

TEST_F(EvaluateTest, XidOutsideWindowOnlyInTotals) {
  events_.gpus[0].xid_counts = {{48, 1}};  // the window already expired it
  HealthReport r = Run(snap_);
  const CheckResult& x = Result(r, Check::kXid);
  EXPECT_EQ(x.verdict, Verdict::kOk);
  EXPECT_TRUE(HasEvidence(x, "no XID in the last 300 s"));
  EXPECT_TRUE(HasEvidence(x, "XIDs since start: 48 x1"));
}

TEST_F(EvaluateTest, XidWindowFromOptions) {
  events_.gpus[0].recent = {{kNow - 100, 79}, {kNow - 10, 13}};
  options_.xid_window_seconds = 60;
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kXid).verdict, Verdict::kWarn) << Dump(Result(r, Check::kXid));
  EXPECT_TRUE(HasEvidence(Result(r, Check::kXid),
                          "XID 13 (graphics engine exception) x1 in the last 60 s"));
  EXPECT_EQ(r.gpus[0].xid_window.count(79), 0u);
  EXPECT_EQ(r.gpus[0].xid_window.at(13), 1u);
}

TEST_F(EvaluateTest, UnknownXidWarnsNeverCrashes) {
  events_.gpus[0].recent = {{kNow, 999}, {kNow, 4000000000u}};
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kXid).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kXid), "XID 999 (unknown XID)"));
}

TEST_F(EvaluateTest, LostGpuFailsDriverAndSkipsHardwareChecks) {
  Sample(1).state = GpuState::kLost;
  Sample(1).state_reason = "nvmlDeviceGetPowerUsage (GPU 1): GPU is lost";
  HealthReport r = Run(snap_);
  EXPECT_TRUE(r.gpus[1].lost);
  EXPECT_FALSE(r.gpus[0].lost);
  const CheckResult& d = Result(r, Check::kDriver, 1);
  EXPECT_EQ(d.verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(d, "GPU lost: nvmlDeviceGetPowerUsage (GPU 1): GPU is lost"));
  EXPECT_NE(d.action.find("reboot"), std::string::npos);
  EXPECT_FALSE(Result(r, Check::kMemory, 1).evaluated);
  EXPECT_FALSE(Result(r, Check::kThermal, 1).evaluated);
}

TEST_F(EvaluateTest, GpuUnavailableEventMarksLost) {
  events_.gpus[0].unavailable_events = 1;
  events_.gpus[0].last_unavailable_time = kNow + 1;  // after the last good read
  HealthReport r = Run(snap_, kNow + 2);
  EXPECT_TRUE(r.gpus[0].lost);
  EXPECT_EQ(Result(r, Check::kDriver).verdict, Verdict::kFail);
  // A later good read means the GPU came back.
  Sample(0).sampled_at = kNow + 3;
  r = Run(snap_, kNow + 3);
  EXPECT_FALSE(r.gpus[0].lost);
}

TEST_F(EvaluateTest, StaleCollectorWarns) {
  Sample(0).state = GpuState::kStale;
  Sample(0).state_reason = "nvmlDeviceGetPowerUsage hangs";
  Sample(1).sampled_at = kNow - 120;  // no read for 2 minutes
  HealthReport r = Run(snap_);
  EXPECT_TRUE(r.gpus[0].stale);
  EXPECT_TRUE(r.gpus[1].stale);
  EXPECT_EQ(Result(r, Check::kDriver, 0).verdict, Verdict::kWarn);
  EXPECT_TRUE(
      HasEvidence(Result(r, Check::kDriver, 1), "last good read 120 s ago (stale after 60 s)"))
      << Dump(Result(r, Check::kDriver, 1));
}

TEST_F(EvaluateTest, RecoveryActionVerdicts) {
  const Verdict expected[] = {Verdict::kOk, Verdict::kFail, Verdict::kFail, Verdict::kWarn,
                              Verdict::kFail};
  for (int action = 0; action <= 4; ++action) {
    Sample().Set(Metric::kRecoveryAction, action);
    HealthReport r = Run(snap_);
    EXPECT_EQ(Result(r, Check::kDriver).verdict, expected[action]) << action;
    EXPECT_TRUE(HasEvidence(Result(r, Check::kDriver), "GPU recovery action")) << action;
  }
  // Without the field, the event's value counts.
  Sample().Clear(Metric::kRecoveryAction);
  events_.gpus[0].last_recovery_action = 2;
  HealthReport r = Run(snap_);
  EXPECT_EQ(Result(r, Check::kDriver).verdict, Verdict::kFail);
  EXPECT_TRUE(HasEvidence(Result(r, Check::kDriver), "node reboot required"));
}

TEST_F(EvaluateTest, NvmlDownFailsTheNode) {
  Snapshot down;
  down.nvml_up = false;
  down.nvml_error = "driver not loaded";
  HealthReport r = Run(down);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_TRUE(r.gpus.empty());
}

TEST_F(EvaluateTest, MigInstancesFoldIntoTheirGpu) {
  Snapshot snap = HealthyNode(1);
  GpuInfo mig = snap.gpus[0];
  mig.gpu_instance_id = 1;
  mig.mig_profile = "1g.10gb";
  // MIG instance listed first; the whole GPU must still be the one judged.
  snap.gpus.insert(snap.gpus.begin(), mig);
  GpuSample mig_sample;
  mig_sample.Set(Metric::kEccDbeVolatile, 5);
  snap.samples.insert(snap.samples.begin(), mig_sample);
  HealthReport r = Run(snap);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].slot, 1u);
  EXPECT_EQ(Result(r, Check::kMemory).verdict, Verdict::kOk);
  EXPECT_EQ(WholeGpuSlots(snap).at(0), 1u);
}

}  // namespace
}  // namespace gpuscope::health
