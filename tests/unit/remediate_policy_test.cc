// The remediation policy (remediate/policy.h): one action per fault, never an
// admin's drain, resume only our own after the healthy time, the circuit
// breaker, opt-out and dry run.
#include <gtest/gtest.h>

#include "remediate/policy.h"

namespace gpuscope::remediate {
namespace {

const Fault kXid79{Finding::kXid79, 3, "GPU-3"};
const Fault kLost{Finding::kGpuLost, 3, "GPU-3"};
const Fault kRemap{Finding::kRowRemapFailure, 1, "GPU-1"};

NodeView Idle(int nodes = 10, int ours = 0) {
  NodeView v;
  v.found = true;
  v.nodes = nodes;
  v.drained_by_us = ours;
  return v;
}

NodeView DrainedBy(std::string reason, int nodes = 10, int ours = 0) {
  NodeView v = Idle(nodes, ours);
  v.drained = true;
  v.reason = std::move(reason);
  return v;
}

// Runs one cycle: Assess, then (when asked) Decide against `view` and Settle
// as if the actuator answered `succeeded`.
Decision Cycle(PolicyState& s, const std::vector<Fault>& faults, double now, const NodeView& view,
               const PolicyOptions& o = {}, bool succeeded = true, std::size_t gpus = 4) {
  const Step step = Assess(s, faults, true, gpus, now, o);
  if (step == Step::kNone) return {};
  Decision d = Decide(s, step, view, now, o);
  Settle(s, d, succeeded, now, o);
  return d;
}

// An XID storm (issue 42): XID 95 standing on GPU 0 through 60 cycles while
// its count climbs by the thousand, beside thousands of application XIDs. One
// decision for the fault, not one per event or cycle; it stays handled while
// the storm goes on, and the cleared storm is not a new fault.
TEST(Storm, DecidesOncePerFaultNotPerEvent) {
  PolicyOptions o;
  o.dry_run = true;
  PolicyState s;
  health::HealthReport report;
  report.gpus.resize(2);
  report.gpus[0].uuid = "GPU-0";
  report.gpus[1].gpu = report.gpus[1].slot = 1;
  Snapshot snapshot;
  snapshot.samples.resize(2);
  int decisions = 0;
  for (int t = 0; t < 60; ++t) {
    report.gpus[0].xid_window = {{13, 500u * (t + 1)}, {31, 300u * (t + 1)}, {95, 5u * (t + 1)}};
    const std::vector<Fault> faults = FindFaults(report, snapshot, DefaultFindings());
    ASSERT_EQ(faults.size(), 1u);  // xid_95; the application XIDs are no trigger
    const Decision d = Cycle(s, faults, 1000 + t, Idle(), o);
    if (d.outcome != Outcome::kNone) {
      ++decisions;
      EXPECT_EQ(d.outcome, Outcome::kDryRun);
      EXPECT_EQ(d.keys, std::vector<std::string>{"xid_95/GPU-0"});
    }
  }
  EXPECT_EQ(decisions, 1);
}

TEST(Reason, NamesFaultGpuUuidAndRunbook) {
  EXPECT_EQ(ReasonFor(kXid79, 4),
            "gpuscope: XID 79 on GPU 3 (GPU-3) of 4 GPUs "
            "file:///usr/share/gpuscope/runbooks/GpuFallenOffBus.md");
  EXPECT_EQ(GpusInReason(ReasonFor(kXid79, 4)), 4u);
  EXPECT_EQ(GpusInReason(ReasonFor(kXid79, 0)), 0u);
  EXPECT_EQ(GpusInReason("alice: of 9 GPUs "), 0u);  // not ours
  EXPECT_EQ(GpusInReason("gpuscope: of x GPUs "), 0u);
  EXPECT_TRUE(IsOurReason(ReasonFor(kRemap, 4)));
  EXPECT_FALSE(IsOurReason("maintenance by alice"));
  EXPECT_FALSE(IsOurReason(" gpuscope: leading blank is not ours"));
}

TEST(Breaker, TenPercentAtLeastOne) {
  PolicyOptions o;
  EXPECT_EQ(BreakerLimit(1, o), 1);
  EXPECT_EQ(BreakerLimit(9, o), 1);
  EXPECT_EQ(BreakerLimit(20, o), 2);
  EXPECT_EQ(BreakerLimit(105, o), 10);
  o.breaker_min_nodes = 3;
  EXPECT_EQ(BreakerLimit(10, o), 3);
}

TEST(Policy, HealthyNodeIsNeverTouched) {
  PolicyState s;
  PolicyOptions o;
  for (double t = 0; t < 3600; t += 1) {
    const Step step = Assess(s, {}, true, 4, t, o);
    if (step == Step::kNone) continue;
    // The one look before trusting that no drain of ours stands: never a drain.
    ASSERT_EQ(step, Step::kResume);
    Decision d = Decide(s, step, Idle(), t, o);
    EXPECT_EQ(d.outcome, Outcome::kNone);
    Settle(s, d, true, t, o);
  }
  EXPECT_TRUE(s.looked);
  EXPECT_FALSE(s.holds_drain);
}

TEST(Policy, DrainsOnceWhileTheFaultStands) {
  PolicyState s;
  Decision d = Cycle(s, {kXid79, kLost}, 10, Idle());
  EXPECT_EQ(d.outcome, Outcome::kDone);
  EXPECT_TRUE(d.Execute());
  EXPECT_EQ(d.action, Action::kDrain);
  EXPECT_EQ(d.reason, ReasonFor(kXid79, 4));  // XID 79 before "GPU lost" in the table
  EXPECT_EQ(d.keys.size(), 2u);
  EXPECT_TRUE(s.holds_drain);
  for (double t = 11; t < 100; ++t) {
    EXPECT_EQ(Assess(s, {kXid79, kLost}, true, 4, t, {}), Step::kNone) << t;
  }
}

TEST(Policy, ANewFaultOnADrainedNodeIsFoundDrained) {
  PolicyState s;
  Cycle(s, {kXid79}, 10, Idle());
  Decision d = Cycle(s, {kXid79, kRemap}, 20, DrainedBy(ReasonFor(kXid79, 4), 10, 1));
  EXPECT_EQ(d.outcome, Outcome::kAlreadyDrained);
  EXPECT_FALSE(d.Execute());
  EXPECT_EQ(d.keys, std::vector<std::string>{kRemap.Key()});
}

TEST(Policy, AdminDrainIsLeftAloneAndNotRetried) {
  PolicyState s;
  Decision d = Cycle(s, {kXid79}, 10, DrainedBy("bad DIMM, alice"));
  EXPECT_EQ(d.outcome, Outcome::kAdminDrain);
  EXPECT_FALSE(d.Execute());
  EXPECT_FALSE(s.holds_drain);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 200, {}), Step::kNone);
  // Healthy later: the admin's drain is never resumed.
  PolicyOptions o;
  o.resume_after_s = 60;
  for (double t = 300; t < 1000; t += 5) {
    Decision r = Cycle(s, {}, t, DrainedBy("bad DIMM, alice"), o);
    EXPECT_FALSE(r.Execute()) << t;
  }
}

// issue 39: a node an admin set down (or fail, maint, ...: NodeView::held)
// was drained over the admin's reason, then resumed on recovery.
TEST(Policy, AnAdminsDownIsNeitherDrainedNorResumed) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;
  NodeView down = Idle();
  down.held = true;
  down.state = "down";
  down.reason = "alice: PSU swap, keep out";
  Decision d = Cycle(s, {kXid79}, 0, down, o);
  EXPECT_EQ(d.outcome, Outcome::kAdminDrain);
  EXPECT_FALSE(d.Execute());
  EXPECT_NE(d.detail.find("state 'down'"), std::string::npos) << d.detail;
  EXPECT_FALSE(s.holds_drain);
  for (double t = 1; t < 100; ++t) EXPECT_FALSE(Cycle(s, {}, t, down, o).Execute()) << t;
  // Our drain, then an admin's FAIL over it (the reason stays ours): not resumed.
  PolicyState s2;
  Cycle(s2, {kXid79}, 0, Idle(), o);
  ASSERT_TRUE(s2.holds_drain);
  NodeView failed = DrainedBy(ReasonFor(kXid79, 4), 10, 1);
  failed.held = true;
  failed.state = "drained$";
  Cycle(s2, {}, 5, failed, o);
  Decision r = Cycle(s2, {}, 20, failed, o);
  EXPECT_EQ(r.action, Action::kResume);
  EXPECT_EQ(r.outcome, Outcome::kAdminDrain);
  EXPECT_FALSE(r.Execute());
}

TEST(Policy, ResumesOnlyAfterHealthyForTheSetTime) {
  PolicyOptions o;
  o.resume_after_s = 600;
  PolicyState s;
  Cycle(s, {kXid79}, 10, Idle(), o);
  ASSERT_TRUE(s.holds_drain);
  const NodeView ours = DrainedBy(ReasonFor(kXid79, 4), 10, 1);
  // Healthy from t=100, but a blip at t=400 restarts the clock.
  for (double t = 100; t < 400; t += 10)
    EXPECT_EQ(Cycle(s, {}, t, ours, o).outcome, Outcome::kNone);
  EXPECT_EQ(Assess(s, {}, false, 4, 400, o), Step::kNone);  // NVML down: not healthy
  for (double t = 410; t < 1010; t += 10)
    EXPECT_EQ(Cycle(s, {}, t, ours, o).outcome, Outcome::kNone);
  Decision d = Cycle(s, {}, 1010, ours, o);
  EXPECT_EQ(d.action, Action::kResume);
  EXPECT_EQ(d.outcome, Outcome::kDone);
  EXPECT_FALSE(s.holds_drain);
  EXPECT_EQ(Assess(s, {}, true, 4, 5000, o), Step::kNone);
}

TEST(Policy, AMissingGpuIsNotHealthy) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;
  Cycle(s, {kXid79}, 0, Idle(), o, true, 4);
  for (double t = 1; t < 100; ++t) EXPECT_EQ(Assess(s, {}, true, 3, t, o), Step::kNone) << t;
}

TEST(Policy, DrainTakenOverByAdminIsNotResumed) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;
  Cycle(s, {kXid79}, 0, Idle(), o);
  Cycle(s, {}, 5, DrainedBy("alice: keep it down"), o);  // healthy from t=5
  Decision d = Cycle(s, {}, 20, DrainedBy("alice: keep it down"), o);
  EXPECT_EQ(d.action, Action::kResume);
  EXPECT_EQ(d.outcome, Outcome::kAdminDrain);
  EXPECT_FALSE(d.Execute());
  EXPECT_FALSE(s.holds_drain);
}

TEST(Policy, BreakerRefusesReportsOnceAndDrainsWhenItCloses) {
  PolicyOptions o;
  o.retry_after_s = 30;
  PolicyState s;
  // 10 nodes, 1 drained by gpuscope elsewhere: limit 1 reached.
  Decision d = Cycle(s, {kXid79}, 0, Idle(10, 1), o);
  EXPECT_EQ(d.outcome, Outcome::kBreakerOpen);
  EXPECT_FALSE(d.Execute());
  EXPECT_TRUE(d.reported);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 10, o), Step::kNone);  // not before the retry time
  d = Cycle(s, {kXid79}, 30, Idle(10, 1), o);
  EXPECT_EQ(d.outcome, Outcome::kBreakerOpen);
  EXPECT_FALSE(d.reported);  // counted once per fault
  d = Cycle(s, {kXid79}, 60, Idle(10, 0), o);
  EXPECT_EQ(d.outcome, Outcome::kDone);
  EXPECT_TRUE(s.holds_drain);
}

TEST(Policy, OptOutRefusesOnce) {
  PolicyState s;
  NodeView v = Idle();
  v.opted_out = true;
  EXPECT_EQ(Cycle(s, {kXid79}, 0, v).outcome, Outcome::kOptedOut);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 100, {}), Step::kNone);
}

TEST(Policy, FailedDrainIsRetriedAfterTheRetryTime) {
  PolicyOptions o;
  o.retry_after_s = 30;
  PolicyState s;
  Decision d = Cycle(s, {kXid79}, 0, Idle(), o, /*succeeded=*/false);
  EXPECT_TRUE(d.Execute());
  EXPECT_FALSE(s.holds_drain);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 29, o), Step::kNone);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 30, o), Step::kDrain);
}

TEST(Policy, UnreadableClusterIsAnErrorRetriedLater) {
  PolicyOptions o;
  PolicyState s;
  NodeView down;
  down.error = "sinfo: not found in PATH";
  Decision d = Cycle(s, {kXid79}, 0, down, o);
  EXPECT_EQ(d.outcome, Outcome::kError);
  EXPECT_NE(d.detail.find("sinfo: not found"), std::string::npos);
  EXPECT_FALSE(d.Execute());
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, o.retry_after_s, o), Step::kDrain);
}

TEST(Policy, DryRunChangesNothingAndSaysWhatItWouldDo) {
  PolicyOptions o;
  o.dry_run = true;
  o.resume_after_s = 10;
  PolicyState s;
  Decision d = Cycle(s, {kXid79}, 0, Idle(), o);
  EXPECT_EQ(d.outcome, Outcome::kDryRun);
  EXPECT_FALSE(d.Execute());
  EXPECT_NE(d.detail.find("would drain"), std::string::npos);
  EXPECT_NE(d.detail.find("XID 79 on GPU 3"), std::string::npos);
  EXPECT_FALSE(s.holds_drain);
  EXPECT_EQ(Assess(s, {kXid79}, true, 4, 100, o), Step::kNone);  // once per fault
  d = Cycle(s, {}, 200, Idle(), o);                              // not healthy for 10 s yet
  EXPECT_EQ(d.outcome, Outcome::kNone);
  d = Cycle(s, {}, 210, Idle(), o);
  EXPECT_EQ(d.action, Action::kResume);
  EXPECT_EQ(d.outcome, Outcome::kDryRun);
  EXPECT_FALSE(d.Execute());
}

TEST(Policy, AFaultThatClearsAndReturnsActsAgain) {
  PolicyOptions o;
  o.resume_after_s = 5;
  PolicyState s;
  Cycle(s, {kXid79}, 0, Idle(), o);
  Cycle(s, {}, 1, Idle(), o);
  EXPECT_EQ(Cycle(s, {}, 6, DrainedBy(ReasonFor(kXid79, 4), 10, 1), o).outcome, Outcome::kDone);
  EXPECT_EQ(Cycle(s, {kXid79}, 7, Idle(), o).outcome, Outcome::kDone);
}

TEST(Policy, OurDrainFromAnEarlierRunIsResumedWhenHealthy) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;  // a fresh start: gpuscope restarted while its drain stood
  EXPECT_EQ(Cycle(s, {}, 0, DrainedBy(ReasonFor(kXid79, 4)), o).outcome, Outcome::kNone);
  Decision d = Cycle(s, {}, 10, DrainedBy(ReasonFor(kXid79, 4)), o);
  EXPECT_EQ(d.action, Action::kResume);
  EXPECT_EQ(d.outcome, Outcome::kDone);
}

// issue 39: an agent restarted while its "GPU lost" drain stood forgot the
// node had 4 GPUs and resumed it with one still missing. The count is read
// back from the drain's reason.
TEST(Policy, RestartedWithAGpuMissingDoesNotResume) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;  // a fresh start
  const NodeView ours = DrainedBy(ReasonFor(kLost, 4), 10, 1);
  for (double t = 0; t < 200; ++t) {
    EXPECT_FALSE(Cycle(s, {}, t, ours, o, true, /*gpus=*/3).Execute()) << t;
  }
  EXPECT_TRUE(s.holds_drain);
  EXPECT_EQ(s.gpus_seen, 4u);
  // The GPU is back: resumed after the healthy time.
  Decision d;
  double t = 200;
  for (; t < 230 && !d.Execute(); ++t) d = Cycle(s, {}, t, ours, o, true, 4);
  EXPECT_EQ(d.outcome, Outcome::kDone);
  EXPECT_EQ(t - 1, 210);
}

// issue 39: a fault that clears and comes back every other second, while our
// drain stands, read the cluster on each return (31 sinfo calls a minute).
TEST(Policy, AFlappingFaultBacksOffItsLooks) {
  PolicyOptions o;  // retry_after_s 30
  PolicyState s;
  std::vector<double> looks;
  for (double t = 0; t < 120; ++t) {
    const bool on = static_cast<int>(t) % 2 == 0;
    const Step step =
        Assess(s, on ? std::vector<Fault>{kXid79} : std::vector<Fault>{}, true, 4, t, o);
    if (step != Step::kDrain) continue;
    looks.push_back(t);
    const NodeView v = looks.size() == 1 ? Idle() : DrainedBy(ReasonFor(kXid79, 4), 10, 1);
    Decision d = Decide(s, step, v, t, o);
    Settle(s, d, true, t, o);
  }
  // 0 (drained), then 2, 4, 6, 10, 26, 56, 86, 116: each look 1, 2, 4, ...
  // s after the last one, at most 30 s.
  EXPECT_EQ(looks, (std::vector<double>{0, 2, 4, 6, 10, 26, 56, 86, 116}));
}

// A fault back soon after our resume: the next resume waits twice as long
// each time (drain/resume cycles of a flapping fault).
TEST(Policy, AFaultBackSoonAfterAResumeDoublesTheHealthyTime) {
  PolicyOptions o;
  o.resume_after_s = 10;
  PolicyState s;
  std::vector<double> resumes;
  double t = 0;
  for (int cycle = 0; cycle < 4; ++cycle) {
    const double fault_at = t;
    Cycle(s, {kXid79}, t, Idle(), o);
    ASSERT_TRUE(s.holds_drain) << cycle;
    for (t = fault_at + 1; t < fault_at + 1000; ++t) {
      if (Cycle(s, {}, t, DrainedBy(ReasonFor(kXid79, 4), 10, 1), o).Execute()) break;
    }
    resumes.push_back(t - fault_at - 1);  // healthy time before the resume
    t += 5;                               // the fault comes back 5 s later
  }
  EXPECT_EQ(resumes, (std::vector<double>{10, 20, 40, 80}));
}

}  // namespace
}  // namespace gpuscope::remediate
