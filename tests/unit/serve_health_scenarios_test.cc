// End to end on the simulator: each sim/scenarios/health/*.yaml runs through
// the real sampler (collect::Sampler), the event thread and the health step
// of serve and `gpuscope health` (serve::JudgeCycle), which must give the
// verdicts the scenario's description promises.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "collect/sampler.h"
#include "health/checks.h"
#include "health/events.h"
#include "health/report.h"
#include "health_test_util.h"
#include "serve/health.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::health {
namespace {

using testing::Dump;
using testing::HasEvidence;

constexpr double kBase = 1'700'000'000;

struct Expect {
  unsigned gpu;
  Check check;
  Verdict verdict;
  std::string evidence;  // a substring of one evidence line; empty: any
};

struct XidSeen {
  unsigned gpu;
  unsigned xid;
  uint64_t count;
};

struct Case {
  std::string scenario;  // file name under sim/scenarios/health/
  double t1;             // scenario seconds of the judged sample (the baseline is at t = 1)
  std::vector<XidSeen> xids;
  std::vector<Expect> expects;
  // Sample once more 100 ms later: a hung call is judged by its age when
  // the next cycle starts.
  bool resample = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.scenario; }

using test_support::ScopedEnv;

bool SawXids(const EventState& s, const std::vector<XidSeen>& want) {
  for (const XidSeen& x : want) {
    const GpuEvents* g = s.Find(x.gpu);
    if (!g || !g->xid_counts.count(x.xid) || g->xid_counts.at(x.xid) < x.count) return false;
  }
  return true;
}

class HealthScenarioTest : public ::testing::TestWithParam<Case> {};

TEST_P(HealthScenarioTest, VerdictsMatchTheScenario) {
  const Case& c = GetParam();
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO",
                     test_support::SourceDir() + "/sim/scenarios/health/" + c.scenario);
  ScopedEnv frozen("GPUSCOPE_SIM_FROZEN_TIME", "0");
  std::atomic<double> now{kBase};
  collect::SamplerOptions options;
  options.nvml_path = test_support::SimLibraryPath();
  collect::Sampler sampler(options, [&now] { return now.load(); });
  ASSERT_TRUE(sampler.Open().ok()) << sampler.Open().message();
  std::shared_ptr<const nvml::Library> library = sampler.library();
  ASSERT_NE(library, nullptr);
  const nvml::SimHooks::SetTime set_time = library->sim().set_time;
  ASSERT_NE(set_time, nullptr);

  EventMonitor::Options eo;
  eo.wait_timeout_ms = 50;
  eo.clock = [&now] { return now.load(); };
  auto monitor = EventMonitor::Start(library, eo);
  ASSERT_TRUE(monitor.ok()) << monitor.status().message();

  HealthState state;
  set_time(1);
  now = kBase + 1;
  Snapshot snap = *sampler.SampleOnce(true);
  HealthReport report = serve::JudgeCycle(snap, (*monitor)->State(), state, now, {});
  EXPECT_EQ(report.verdict, Verdict::kOk) << FormatReport(report, {true});

  set_time(c.t1);
  now = kBase + c.t1;
  for (int i = 0; i < 300 && !SawXids((*monitor)->State(), c.xids); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(SawXids((*monitor)->State(), c.xids)) << "the expected XID events did not arrive";
  snap = *sampler.SampleOnce(true);
  if (c.resample) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    snap = *sampler.SampleOnce(true);
  }
  report = serve::JudgeCycle(snap, (*monitor)->State(), state, now, {});
  const std::string text = FormatReport(report, {true});

  std::vector<bool> mentioned(report.gpus.size());
  for (const Expect& e : c.expects) {
    ASSERT_LT(e.gpu, report.gpus.size());
    mentioned[e.gpu] = true;
    const CheckResult& r = report.gpus[e.gpu].Get(e.check);
    EXPECT_TRUE(r.evaluated) << "GPU " << e.gpu << " " << CheckName(e.check) << "\n" << text;
    EXPECT_EQ(r.verdict, e.verdict)
        << "GPU " << e.gpu << " " << CheckName(e.check) << ": " << Dump(r);
    if (!e.evidence.empty()) {
      EXPECT_TRUE(HasEvidence(r, e.evidence)) << "GPU " << e.gpu << " " << CheckName(e.check)
                                              << " lacks '" << e.evidence << "': " << Dump(r);
    }
  }
  for (std::size_t g = 0; g < report.gpus.size(); ++g) {
    if (!mentioned[g]) {
      EXPECT_EQ(report.gpus[g].verdict, Verdict::kOk) << "GPU " << g << "\n" << text;
    }
  }
  // The XIDs reached the snapshot too (the exporter renders them from there).
  for (const XidSeen& x : c.xids) {
    for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
      if (snap.gpus[i].index == x.gpu && !snap.gpus[i].gpu_instance_id) {
        EXPECT_GE(snap.samples[i].xid_counts.count(x.xid), 1u) << "GPU " << x.gpu;
      }
    }
  }
  (*monitor)->Stop();
}

using enum Check;
using enum Verdict;

const Case kCases[] = {
    {"xid-79-lost.yaml",
     15,
     {{3, 79, 1}},
     {{3, kDriver, kFail, "GPU lost"}, {3, kXid, kFail, "XID 79 (fallen off the bus)"}}},
    {"dbe-xid-48.yaml",
     15,
     {{1, 48, 1}, {2, 48, 1}},
     {{1, kMemory, kFail, "double-bit) ECC errors since the driver loaded: 1"},
      {1, kMemory, kFail, "row remap pending"},
      {1, kXid, kFail, "XID 48"},
      {2, kMemory, kFail, "page retirement pending"},
      {2, kMemory, kFail, "retired pages 2"},
      {2, kXid, kFail, "XID 48"}}},
    {"row-remap-pending.yaml",
     15,
     {{0, 48, 1}, {0, 63, 1}},
     {{0, kMemory, kFail, "row remap pending"}, {0, kXid, kFail, "XID 63"}}},
    {"row-remap-failure.yaml",
     15,
     {{1, 64, 1}},
     {{1, kMemory, kFail, "row remapping failed"}, {1, kXid, kFail, "XID 64"}}},
    {"nvlink-errors.yaml",
     70,
     {{2, 74, 1}},
     {{2, kNvlink, kFail, "link 3: replay errors"},
      {2, kNvlink, kFail, "link 3: CRC errors"},
      {2, kXid, kFail, "XID 74"},
      {0, kNvlink, kOk, ""}}},
    {"xid-94-95.yaml",
     15,
     {{1, 94, 1}, {2, 95, 1}},
     {{1, kXid, kWarn, "XID 94"}, {2, kXid, kFail, "XID 95"}, {2, kMemory, kFail, ""}}},
    {"app-xids.yaml",
     30,
     {{0, 13, 3}, {1, 31, 1}, {2, 43, 1}},
     {{0, kXid, kWarn, "XID 13 (graphics engine exception) x3"},
      {1, kXid, kWarn, "XID 31"},
      {2, kXid, kOk, "XID 43"}}},
    {"pcie-replay-storm.yaml",
     70,
     {},
     {{1, kPcie, kWarn, "PCIe link x8 is narrower than its maximum x16"},
      {1, kPcie, kWarn, "limit 4/min (Gen3 x8"},
      {0, kPcie, kOk, ""}}},
    {"thermal-slowdown.yaml", 150, {}, {{0, kThermal, kWarn, "slowdown"}, {1, kThermal, kOk, ""}}},
    {"power-brake.yaml",
     15,
     {},
     {{1, kPower, kWarn, "HW power brake active"}, {0, kPower, kOk, ""}}},
    {"recovery-action.yaml",
     15,
     {{0, 154, 1}, {1, 154, 1}, {2, 154, 1}},
     {{0, kDriver, kFail, "recovery action 1"},
      {1, kDriver, kWarn, "recovery action 3"},
      {2, kDriver, kFail, "recovery action 4"},
      {3, kDriver, kOk, ""}}},
    // Before hung-call: its hung worker keeps the simulator (and its scenario) loaded.
    {"gb200-fabric.yaml",
     15,
     {},
     {{0, kFabric, kOk, "fabric registration completed, clique 1"},
      {1, kFabric, kWarn, "fabric registration in progress"},
      {2, kFabric, kFail, "fabric registration failed: NVML code 999"},
      {3, kFabric, kWarn, "fabric bandwidth degraded"},
      {4, kFabric, kWarn, "fabric route recovery in progress"},
      {5, kFabric, kFail, "fabric route unhealthy"},
      {6, kFabric, kWarn, "fabric access-timeout recovery in progress"},
      {7, kFabric, kFail, "fabric incorrect configuration: no partition (code 4)"}}},
    {"hung-call.yaml",
     15,
     {},
     {{1, kDriver, kWarn, "collector stale"}, {0, kDriver, kOk, ""}},
     true},
};

// The drills of issue 42 sample many times, as serve does.
class DrillTest : public ::testing::Test {
 protected:
  void Open(const std::string& scenario) {
    scenario_.emplace("GPUSCOPE_SIM_SCENARIO",
                      test_support::SourceDir() + "/sim/scenarios/health/" + scenario);
    frozen_.emplace("GPUSCOPE_SIM_FROZEN_TIME", "0");
    collect::SamplerOptions options;
    options.nvml_path = test_support::SimLibraryPath();
    sampler_ = std::make_unique<collect::Sampler>(options, [this] { return now_.load(); });
    ASSERT_TRUE(sampler_->Open().ok()) << sampler_->Open().message();
    set_time_ = sampler_->library()->sim().set_time;
    ASSERT_NE(set_time_, nullptr);
    EventMonitor::Options eo;
    eo.wait_timeout_ms = 50;
    eo.clock = [this] { return now_.load(); };
    eo.log_line = [this](const std::string& line) { log_lines_.push_back(line); };
    auto monitor = EventMonitor::Start(sampler_->library(), eo);
    ASSERT_TRUE(monitor.ok()) << monitor.status().message();
    monitor_ = std::move(*monitor);
  }
  // Scenario time t (gpuscope started at t = 0). The clock moves first: the
  // event thread may take the events of t as soon as the simulator is at t,
  // and must not stamp them with the time before (a line a minute early).
  void At(double t) {
    now_ = kBase + t;
    set_time_(t);
  }
  HealthReport Judge() {
    Snapshot snap = *sampler_->SampleOnce(true);
    return serve::JudgeCycle(snap, monitor_->State(), state_, now_, {});
  }
  void TearDown() override {
    if (monitor_) monitor_->Stop();
  }

  std::optional<ScopedEnv> scenario_, frozen_;
  std::atomic<double> now_{kBase};
  std::unique_ptr<collect::Sampler> sampler_;
  nvml::SimHooks::SetTime set_time_ = nullptr;
  std::unique_ptr<EventMonitor> monitor_;
  std::vector<std::string> log_lines_;  // only the event thread writes, read after Stop
  HealthState state_;
};

// Links training up over a minute after the node booted: nothing is found,
// at any cycle.
TEST_F(DrillTest, PlannedRebootRaisesNothingWhileLinksTrain) {
  Open("planned-reboot.yaml");
  for (double t = 1; t <= 240; t += 5) {
    At(t);
    const HealthReport r = Judge();
    EXPECT_EQ(r.verdict, Verdict::kOk) << "t = " << t << "\n" << FormatReport(r, {true});
    for (const GpuHealth& g : r.gpus) {
      for (const auto& [link, down] : g.nvlinks_not_up) {
        EXPECT_FALSE(down) << "t = " << t << " GPU " << g.gpu << " link " << link;
        EXPECT_LT(t, 60) << "link " << link << " still not up";
      }
    }
  }
}

// A link that never trains is down after the training time; a link that goes
// down on the running node is down at once.
TEST_F(DrillTest, LinkDownPastTrainingOrOnARunningNodeIsFound) {
  Open("nvlink-fails-training.yaml");
  for (double t = 1; t < 100; t += 5) {
    At(t);
    const HealthReport r = Judge();
    EXPECT_EQ(r.verdict, Verdict::kOk) << "t = " << t << "\n" << FormatReport(r, {true});
  }
  At(101);  // GPU 0's link 2 went down at 100 s on the running node
  HealthReport r = Judge();
  EXPECT_EQ(r.gpus[0].Get(Check::kNvlink).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(r.gpus[0].Get(Check::kNvlink), "link 2 went down (was active)"));
  EXPECT_EQ(r.gpus[1].verdict, Verdict::kOk) << FormatReport(r, {true});  // 100 s: training
  At(181);  // 180 s after gpuscope first read GPU 1 (t = 1)
  r = Judge();
  EXPECT_EQ(r.gpus[1].Get(Check::kNvlink).verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(r.gpus[1].Get(Check::kNvlink), "link 5 stayed down 180 s"))
      << Dump(r.gpus[1].Get(Check::kNvlink));
  ASSERT_EQ(r.gpus[1].nvlinks_not_up.size(), 1u);
  EXPECT_EQ(r.gpus[1].nvlinks_not_up[0], std::make_pair(5u, true));
}

// The storm's counts are exact, and the log has a line per (GPU, XID) per
// minute, not one per XID.
TEST_F(DrillTest, XidStormCountsExactlyAndLogsOncePerMinute) {
  Open("xid-storm.yaml");
  At(1);
  Judge();
  At(70);
  const std::map<unsigned, uint64_t> want = {{13, 30000}, {31, 18000}, {43, 11700}, {95, 300}};
  for (int i = 0; i < 1000 && monitor_->State().Find(0)->xid_counts != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(monitor_->State().Find(0)->xid_counts, want);
  const HealthReport r = Judge();
  EXPECT_EQ(r.gpus[0].xid_window, want);
  EXPECT_EQ(r.gpus[0].Get(Check::kXid).verdict, Verdict::kFail);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::kOk);
  const EventState st = monitor_->State();
  EXPECT_TRUE(!st.Find(1) || st.Find(1)->xid_counts.empty());
  monitor_->Stop();
  EXPECT_EQ(log_lines_.size(), 4u);  // the first of each code; the rest within the minute
}

INSTANTIATE_TEST_SUITE_P(Scenarios, HealthScenarioTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.scenario;
                           name = name.substr(0, name.find('.'));
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace gpuscope::health
