// The job ledger (jobs/ledger.h): exact per-holder accounting between cycles.
#include <gtest/gtest.h>

#include <memory>

#include "gpuscope/attribution.h"
#include "jobs/ledger.h"

namespace gpuscope::jobs {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

Holder Job(const std::string& id) {
  Holder h;
  h.hpc_job = id;
  h.workload = "train";
  return h;
}

Holder Pod(const std::string& pod) {
  Holder h;
  h.namespace_name = "ml";
  h.pod = pod;
  h.container = "c";
  h.workload = "serve";
  return h;
}

// One GPU's sample: counters as the sampler integrates them.
struct Reading {
  double busy = 0, sm = 0, energy_mj = 0, util = 100, memory_used = 10 * kGiB;
  double clock_reasons = 0, hw_thermal_seconds = 0;
  bool held_process = true;
};

GpuSample Sample(const Reading& r) {
  GpuSample s;
  s.Set(Metric::kBusySeconds, r.busy);
  s.Set(Metric::kSmActiveSeconds, r.sm);
  s.Set(Metric::kEnergyConsumption, r.energy_mj);
  s.Set(Metric::kGpuUtil, r.util);
  s.Set(Metric::kMemoryUsed, r.memory_used);
  s.Set(Metric::kMemoryTotal, 80 * kGiB);
  s.Set(Metric::kClockReasons, r.clock_reasons);
  s.Set(Metric::kThrottleHwThermal, r.hw_thermal_seconds);
  if (r.held_process) {
    ProcessInfo p;
    p.pid = 7;
    p.used_memory_bytes = static_cast<uint64_t>(r.memory_used);
    s.processes.push_back(p);
  }
  return s;
}

// A snapshot at `t` of GPUs GPU-0.. with these readings and holders.
Snapshot At(double t, const std::vector<Reading>& readings,
            const std::vector<std::vector<Holder>>& holders) {
  Snapshot snap;
  snap.timestamp = t;
  snap.system.hostname = "node1";
  auto attribution = std::make_shared<Attribution>();
  for (std::size_t i = 0; i < readings.size(); ++i) {
    GpuInfo info;
    info.index = static_cast<unsigned>(i);
    info.uuid = "GPU-" + std::to_string(i);
    snap.gpus.push_back(info);
    snap.samples.push_back(Sample(readings[i]));
    if (i < holders.size() && !holders[i].empty()) attribution->holders[info.uuid] = holders[i];
  }
  snap.attribution = attribution;
  return snap;
}

TEST(Ledger, ExclusiveJobIntegratesCounterDeltasBetweenCycles) {
  Ledger ledger;
  const std::vector<std::vector<Holder>> held = {{Job("42")}, {Job("42")}};
  ledger.Observe(At(100, {{0, 0, 0}, {0, 0, 0}}, held), {});
  ledger.Observe(At(101, {{1, 0.5, 300000}, {0.5, 0.25, 100000}}, held), {});
  ledger.Observe(At(103, {{3, 1.5, 900000}, {1.5, 0.75, 300000}}, held), {});
  auto job = ledger.Find("job", "42");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->start, 100);
  EXPECT_FALSE(job->end);
  ASSERT_EQ(job->devices.size(), 2u);
  const DeviceUsage& d0 = job->devices[0];
  EXPECT_EQ(d0.uuid, "GPU-0");
  EXPECT_EQ(d0.hostname, "node1");
  EXPECT_DOUBLE_EQ(d0.held_seconds, 3);
  EXPECT_DOUBLE_EQ(d0.busy_seconds, 3);
  EXPECT_DOUBLE_EQ(d0.sm_active_seconds, 1.5);
  EXPECT_DOUBLE_EQ(d0.energy_joules, 900);
  EXPECT_DOUBLE_EQ(job->devices[1].busy_seconds, 1.5);
  EXPECT_DOUBLE_EQ(d0.idle_held_seconds, 0);
  // The same holder also feeds its workload.
  auto workload = ledger.Find("workload", "train");
  ASSERT_TRUE(workload);
  EXPECT_DOUBLE_EQ(workload->devices[0].held_seconds, 3);
}

TEST(Ledger, SharedGpuSplitsEvenlyBetweenHolders) {
  Ledger ledger;
  const std::vector<std::vector<Holder>> held = {{Pod("a"), Pod("b")}};
  ledger.Observe(At(10, {{0, 0, 0}}, held), {});
  ledger.Observe(At(14, {{4, 2, 400000}}, held), {});
  auto a = ledger.Find("pod", "ml/a");
  auto b = ledger.Find("pod", "ml/b");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->devices[0].held_seconds, 2);
  EXPECT_DOUBLE_EQ(b->devices[0].energy_joules, 200);
  // Both pods are one workload: its shares add up to the whole GPU.
  auto workload = ledger.Find("workload", "serve");
  ASSERT_TRUE(workload);
  EXPECT_DOUBLE_EQ(workload->devices[0].held_seconds, 4);
  EXPECT_DOUBLE_EQ(workload->devices[0].busy_seconds, 4);
  // No per-process samples (the helper's process has no share): said so.
  EXPECT_EQ(a->devices[0].split, "even split");
}

// A snapshot of one GPU time-sliced between pods a and b, whose processes
// (pids 1 and 2) used `share_a` and `share_b` of its SM time; `measured`
// false: NVML gave no per-process samples. Pid 3, a host process (nobody's),
// used `share_host`.
Snapshot Shared(double t, const Reading& r, double share_a, double share_b, bool measured,
                double share_host = 0) {
  Snapshot snap = At(t, {r}, {{Pod("a"), Pod("b")}});
  GpuSample& s = snap.samples[0];
  s.processes.clear();
  for (auto [pid, share] : {std::pair{1u, share_a}, {2u, share_b}, {3u, share_host}}) {
    ProcessInfo p;
    p.pid = pid;
    if (measured) p.sm_share = share;
    s.processes.push_back(p);
  }
  s.process_sm_measured = measured;
  auto attribution = std::make_shared<Attribution>(*snap.attribution);
  attribution->processes[1] = Pod("a");
  attribution->processes[2] = Pod("b");
  snap.attribution = attribution;
  return snap;
}

TEST(Ledger, SharedGpuSplitsByMeasuredShare) {
  Ledger ledger;
  ledger.Observe(Shared(10, {0, 0, 0}, 0.7, 0.1, true), {});
  ledger.Observe(Shared(14, {3.2, 2, 400000}, 0.7, 0.1, true), {});
  auto a = ledger.Find("pod", "ml/a");
  auto b = ledger.Find("pod", "ml/b");
  ASSERT_TRUE(a && b);
  // 0.7 : 0.1 of the holders' 0.8.
  EXPECT_DOUBLE_EQ(a->devices[0].busy_seconds, 3.2 * 7 / 8);
  EXPECT_DOUBLE_EQ(b->devices[0].busy_seconds, 3.2 / 8);
  EXPECT_DOUBLE_EQ(b->devices[0].held_seconds, 4.0 / 8);
  EXPECT_DOUBLE_EQ(b->devices[0].energy_joules, 400.0 / 8);
  EXPECT_EQ(a->devices[0].split, "measured");
  EXPECT_EQ(b->devices[0].split, "measured");
  auto workload = ledger.Find("workload", "serve");
  ASSERT_TRUE(workload);
  EXPECT_DOUBLE_EQ(workload->devices[0].held_seconds, 4);
}

// Use no holder's process made (a host process, or a holder's process hidden
// from attribution) is split evenly: hiding one's work shifts none of it
// onto the other holders.
TEST(Ledger, UnheldUseIsSplitEvenly) {
  Ledger ledger;
  ledger.Observe(Shared(10, {0, 0, 0}, 0.5, 0.1, true, 0.2), {});
  ledger.Observe(Shared(14, {3.2, 2, 0}, 0.5, 0.1, true, 0.2), {});
  auto a = ledger.Find("pod", "ml/a");
  auto b = ledger.Find("pod", "ml/b");
  ASSERT_TRUE(a && b);
  // a: 0.5 / 0.8 + 0.2 / 0.8 / 2 = 0.75; b: 0.1 / 0.8 + 0.125 = 0.25.
  EXPECT_NEAR(a->devices[0].held_seconds, 3, 1e-9);
  EXPECT_NEAR(b->devices[0].held_seconds, 1, 1e-9);
  EXPECT_EQ(b->devices[0].split, "measured");
}

TEST(Ledger, SharedGpuWithoutSamplesOrUseSplitsEvenlyAndSaysSo) {
  for (const bool measured : {false, true}) {  // unsupported; measured but nobody's ran
    Ledger ledger;
    ledger.Observe(Shared(10, {0, 0, 0}, 0, 0, measured), {});
    ledger.Observe(Shared(14, {4, 2, 400000}, 0, 0, measured), {});
    auto a = ledger.Find("pod", "ml/a");
    ASSERT_TRUE(a);
    EXPECT_DOUBLE_EQ(a->devices[0].busy_seconds, 2) << measured;
    EXPECT_EQ(a->devices[0].split, "even split") << measured;
  }
}

TEST(Ledger, SplitThatChangesIsMixed) {
  Ledger ledger;
  ledger.Observe(Shared(10, {0, 0, 0}, 0.7, 0.1, false), {});
  ledger.Observe(Shared(12, {2, 1, 0}, 0.7, 0.1, false), {});  // even: 1 s each
  ledger.Observe(Shared(14, {4, 2, 0}, 0.7, 0.1, true), {});   // measured: 1.75 and 0.25
  auto b = ledger.Find("pod", "ml/b");
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->devices[0].busy_seconds, 1.25);
  EXPECT_EQ(b->devices[0].split, "mixed");
}

TEST(Ledger, CountsOnlyIntervalsHeldAtBothEnds) {
  Ledger ledger;
  ledger.Observe(At(0, {{0}}, {{}}), {});
  ledger.Observe(At(5, {{5}}, {{Job("7")}}), {});  // appears: nothing counted yet
  ledger.Observe(At(6, {{6}}, {{Job("7")}}), {});
  auto job = ledger.Find("job", "7");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->start, 5);
  EXPECT_DOUBLE_EQ(job->devices[0].held_seconds, 1);
  EXPECT_DOUBLE_EQ(job->devices[0].busy_seconds, 1);
}

TEST(Ledger, IdleHeldAndThrottledJudgedAtTheIntervalEnd) {
  Ledger ledger;
  const std::vector<std::vector<Holder>> held = {{Job("9")}};
  Reading idle{0, 0, 0, /*util=*/0, /*memory=*/2 * kGiB};
  ledger.Observe(At(0, {idle}, held), {});
  ledger.Observe(At(2, {idle}, held), {});
  Reading hot{2, 2, 0, 100, 2 * kGiB, /*reasons=*/0x40, /*hw thermal s=*/1.5};
  ledger.Observe(At(3, {hot}, held), {});
  auto job = ledger.Find("job", "9");
  ASSERT_TRUE(job);
  const DeviceUsage& d = job->devices[0];
  EXPECT_DOUBLE_EQ(d.idle_held_seconds, 2);
  EXPECT_DOUBLE_EQ(d.throttled_seconds, 1);
  EXPECT_DOUBLE_EQ(d.throttle_reason_seconds.at("hw_thermal_slowdown"), 1.5);
}

TEST(Ledger, LongGapsCountOnlyMaxGap) {
  Ledger ledger({.max_gap_seconds = 10});
  const std::vector<std::vector<Holder>> held = {{Job("1")}};
  ledger.Observe(At(0, {{0, 0, 0}}, held), {});
  ledger.Observe(At(100, {{100, 0, 1e6}}, held), {});
  auto job = ledger.Find("job", "1");
  EXPECT_DOUBLE_EQ(job->devices[0].held_seconds, 10);
  EXPECT_DOUBLE_EQ(job->devices[0].busy_seconds, 10);
  EXPECT_DOUBLE_EQ(job->devices[0].energy_joules, 100);
}

TEST(Ledger, EndedHoldersAreKeptBoundedInCountAndTime) {
  Ledger ledger({.keep_ended_seconds = 100, .max_ended = 2});
  for (int j = 0; j < 4; ++j) {
    ledger.Observe(At(j * 10, {{}}, {{Job(std::to_string(j))}}), {});
  }
  ledger.Observe(At(40, {{}}, {{}}), {});
  // Jobs 0..3 ended; at most 2 kept, the newest.
  EXPECT_FALSE(ledger.Find("job", "0"));
  EXPECT_FALSE(ledger.Find("job", "1"));
  auto last = ledger.Find("job", "3");
  ASSERT_TRUE(last);
  ASSERT_TRUE(last->end);
  EXPECT_EQ(*last->end, 30);
  EXPECT_EQ(ledger.ended_count(), 2u);
  ledger.Observe(At(200, {{}}, {{}}), {});  // past keep_ended_seconds
  EXPECT_FALSE(ledger.Find("job", "3"));
  EXPECT_TRUE(ledger.List().empty());
}

TEST(Ledger, HolderThatComesBackRunsAgain) {
  Ledger ledger;
  ledger.Observe(At(0, {{}}, {{Job("5")}}), {});
  ledger.Observe(At(1, {{}}, {{}}), {});
  ASSERT_TRUE(ledger.Find("job", "5")->end);
  ledger.Observe(At(2, {{}}, {{Job("5")}}), {});
  EXPECT_FALSE(ledger.Find("job", "5")->end);
  EXPECT_EQ(ledger.ended_count(), 0u);
  EXPECT_EQ(ledger.List("job").size(), 1u);
  EXPECT_TRUE(ledger.List("pod").empty());
}

TEST(Ledger, MigInstanceIsItsOwnDevice) {
  Ledger ledger;
  Snapshot a = At(0, {{0}, {0}}, {});
  Snapshot b = At(2, {{2}, {1}}, {});
  for (Snapshot* s : {&a, &b}) {
    // GPU-0 split: two MIG instances of one board, job 8 on instance 1 only.
    for (unsigned i = 0; i < 2; ++i) {
      s->gpus[i].uuid = "GPU-0";
      s->gpus[i].gpu_instance_id = i + 1;
      s->gpus[i].mig_profile = i == 0 ? "1g.10gb" : "3g.40gb";
    }
    auto attribution = std::make_shared<Attribution>();
    attribution->holders["GPU-0/1"] = {Job("8")};
    s->attribution = attribution;
  }
  ledger.Observe(a, {});
  ledger.Observe(b, {});
  auto job = ledger.Find("job", "8");
  ASSERT_TRUE(job);
  ASSERT_EQ(job->devices.size(), 1u);
  EXPECT_EQ(job->devices[0].device_key, "GPU-0/1");
  EXPECT_EQ(job->devices[0].mig_profile, "1g.10gb");
  EXPECT_DOUBLE_EQ(job->devices[0].busy_seconds, 2);  // its own integral, not the sibling's
  EXPECT_EQ(job->devices[0].split, "sole holder");
}

TEST(Ledger, SharedMigInstanceSplitsEvenly) {
  // NVML gives no per-process samples on MIG: even if a sample said so, a
  // MIG instance's holders split it evenly.
  Ledger ledger;
  for (double t : {0.0, 2.0}) {
    Snapshot s = Shared(t, {t}, 0.7, 0.1, true);
    s.gpus[0].gpu_instance_id = 1;
    s.gpus[0].mig_profile = "3g.40gb";
    auto attribution = std::make_shared<Attribution>(*s.attribution);
    attribution->holders["GPU-0/1"] = attribution->holders["GPU-0"];
    s.attribution = attribution;
    ledger.Observe(s, {});
  }
  auto b = ledger.Find("pod", "ml/b");
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->devices[0].busy_seconds, 1);
  EXPECT_EQ(b->devices[0].split, "even split");
}

TEST(Ledger, FindingsKeepFirstAndLastSeen) {
  Ledger ledger;
  analysis::GpuDiagnosis d;
  d.slot = 0;
  d.findings.push_back({});
  d.findings.back().kind = analysis::FindingKind::kIdleHeld;
  ledger.Observe(At(10, {{}}, {{Job("3")}}), {d});
  ledger.Observe(At(20, {{}}, {{Job("3")}}), {d});
  auto job = ledger.Find("job", "3");
  ASSERT_EQ(job->findings.size(), 1u);
  EXPECT_EQ(job->findings[0].kind, "idle_held");
  EXPECT_EQ(job->findings[0].first, 10);
  EXPECT_EQ(job->findings[0].last, 20);
}

// Issue 39 item 10: 450 jobs that kept ending and coming back took RSS from 9.6 to 44 MB in
// 3 minutes (each end left a record behind until --jobs-keep-ended). Whatever the churn, the
// ledger keeps one record per holder, and its bytes stop growing.
TEST(Ledger, ChurnOfTheSameJobsKeepsOneRecordEach) {
  Ledger ledger;
  constexpr int kJobs = 450, kGpus = 8;
  auto cycle = [&](int t) {  // the even jobs on even cycles, the odd ones on odd cycles
    std::vector<std::vector<Holder>> held(kGpus);
    for (int j = t % 2; j < kJobs; j += 2)
      held[1 + j % (kGpus - 1)].push_back(Job(std::to_string(j)));
    held[0].push_back(Job("steady"));  // alone on GPU 0
    ledger.Observe(At(t, std::vector<Reading>(kGpus, Reading{double(t)}), held), {});
  };
  for (int t = 0; t < 20; ++t) cycle(t);
  const std::size_t settled = ledger.bytes();
  for (int t = 20; t < 600; ++t) cycle(t);
  EXPECT_EQ(ledger.size(), std::size_t{kJobs + 2});  // the jobs, "steady" and workload "train"
  EXPECT_LE(ledger.bytes(), settled + settled / 10);
  EXPECT_LE(ledger.bytes(), LedgerOptions{}.max_bytes);
  // The job that stayed is reported exactly.
  auto steady = ledger.Find("job", "steady");
  ASSERT_TRUE(steady);
  EXPECT_FALSE(steady->end);
  ASSERT_EQ(steady->devices.size(), 1u);
  EXPECT_DOUBLE_EQ(steady->devices[0].held_seconds, 599);
  EXPECT_DOUBLE_EQ(steady->devices[0].busy_seconds, 599);
}

// The byte bound holds when ids are huge (a 60 KiB job id): the oldest ended go first, a
// running job stays and is reported exactly, and an evicted one is unknown.
TEST(Ledger, EndedHoldersAreKeptBoundedInBytes) {
  Ledger ledger({.max_bytes = 1 << 20});
  const std::string huge(60 << 10, 'j');
  for (int t = 0; t < 100; ++t) {
    ledger.Observe(
        At(t, {{double(t)}, {double(t)}}, {{Job(huge + std::to_string(t))}, {Job("steady")}}), {});
    EXPECT_LE(ledger.bytes(), std::size_t{1} << 20) << "at cycle " << t;
  }
  EXPECT_GE(ledger.size(), 4u);
  EXPECT_LT(ledger.size(), 20u);
  EXPECT_FALSE(ledger.Find("job", huge + "0"));  // evicted: unknown
  auto last = ledger.Find("job", huge + "98");   // ended last, kept
  ASSERT_TRUE(last);
  EXPECT_EQ(*last->end, 98);
  auto steady = ledger.Find("job", "steady");
  ASSERT_TRUE(steady);
  EXPECT_DOUBLE_EQ(steady->devices[0].held_seconds, 99);
  EXPECT_DOUBLE_EQ(steady->devices[0].busy_seconds, 99);
}

}  // namespace
}  // namespace gpuscope::jobs
