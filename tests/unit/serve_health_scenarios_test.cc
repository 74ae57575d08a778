// End to end on the simulator: each sim/scenarios/health/*.yaml runs through
// the real sampler (collect::Sampler), the event thread and the health step
// of serve and `gpuscope health` (serve::JudgeCycle), which must give the
// verdicts the scenario's description promises.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
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
