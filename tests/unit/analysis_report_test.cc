#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/monitor.h"
#include "analysis/report.h"
#include "analysis/signals.h"
#include "analysis/window_stats.h"
#include "analysis_test_util.h"

namespace gpuscope::analysis {
namespace {

using test_util::FakeGpu;
using test_util::Fill;
using test_util::kGiB;
using test_util::Level;
using test_util::MakeGpu;
using ::testing::HasSubstr;
using ::testing::Not;

Series Make(std::vector<double> t, std::vector<double> v) { return Series{t, v}; }

TEST(WindowStats, LeastSquaresSlope) {
  Series s;
  for (int i = 0; i < 100; ++i) s.t.push_back(1.7e9 + i), s.v.push_back(5 + 2.5 * i);
  LinearFit fit = FitLine(s);
  EXPECT_NEAR(fit.slope, 2.5, 1e-6);
  EXPECT_NEAR(fit.r2, 1.0, 1e-9);
  EXPECT_NEAR(fit.At(1.7e9 + 10), 30, 1e-3);
  Series flat = Make({0, 1, 2}, {4, 4, 4});
  EXPECT_DOUBLE_EQ(FitLine(flat).slope, 0);
}

TEST(WindowStats, SharesRunsAndTrailing) {
  Series s = Make({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 9, 9, 0, 9, 0, 0});
  const Condition low = Below(1);
  EXPECT_DOUBLE_EQ(ShareWhere(s, low), 5.0 / 8);
  EXPECT_EQ(CountRuns(s, low), 3);
  EXPECT_DOUBLE_EQ(TrailingRunSeconds(s, low), 2);
  EXPECT_DOUBLE_EQ(TrailingRunSeconds(s, AtLeast(1)), 0);
}

TEST(WindowStats, CounterRateAndReasonBits) {
  std::vector<WindowPoint> points(11);
  for (int i = 0; i <= 10; ++i) {
    points[i].t = i;
    points[i].values[Index(Metric::kThrottleSwPowerCap)] = static_cast<float>(0.3 * i);
    points[i].present.set(Index(Metric::kThrottleSwPowerCap));
    points[i].values[Index(Metric::kClockReasons)] = i < 4 ? 0x44 : 0x1;
    points[i].present.set(Index(Metric::kClockReasons));
  }
  EXPECT_NEAR(*CounterRate(points, Metric::kThrottleSwPowerCap), 0.3, 1e-6);
  EXPECT_FALSE(CounterRate(points, Metric::kThrottleHwThermal).has_value());
  EXPECT_NEAR(*ReasonShare(points, 0x40), 4.0 / 11, 1e-9);
  EXPECT_NEAR(*ReasonShare(points, 0x80), 0, 1e-9);
}

// One 5 s stall among 300 s at 97%: the raw deviation is 12 points, the
// 5%-trimmed one stays at the plateau's; a load that keeps moving stays wide.
TEST(WindowStats, TrimmedSpreadIgnoresOneStall) {
  Series stall, moving;
  for (int i = 0; i < 300; ++i) {
    stall.t.push_back(i), stall.v.push_back(i >= 150 && i < 155 ? 0 : 0.97);
    moving.t.push_back(i), moving.v.push_back(i % 10 < 5 ? 0.2 : 0.97);
  }
  EXPECT_GT(Summarize(stall).stddev, 0.1);
  EXPECT_LT(TrimmedStddev(stall, 0.05), 0.01);
  EXPECT_GT(TrimmedStddev(moving, 0.05), 0.3);
}

// The change point of a condition that began 40 s before the end; none for
// one that holds (or alternates) throughout; none shorter than min_side.
TEST(WindowStats, RiseOnsetFindsTheChangePoint) {
  Series late, periodic, blip;
  for (int i = 0; i < 300; ++i) {
    late.t.push_back(i), late.v.push_back(i >= 260 ? 1 : 0);
    periodic.t.push_back(i), periodic.v.push_back(i % 10 < 5 ? 1 : 0);
    blip.t.push_back(i), blip.v.push_back(i >= 295 ? 1 : 0);
  }
  ASSERT_TRUE(RiseOnset(late, 0.3, 10));
  EXPECT_DOUBLE_EQ(*RiseOnset(late, 0.3, 10), 260);
  EXPECT_FALSE(RiseOnset(periodic, 0.3, 10));
  EXPECT_FALSE(RiseOnset(blip, 0.6, 10));
}

// A flat 40 GiB, then a leak from 250 s: the split lands on the leak's start.
TEST(WindowStats, TwoLineSplitFindsWhereTheLeakBegan) {
  Series s;
  for (int i = 0; i < 300; ++i) s.t.push_back(i), s.v.push_back(40 + (i >= 250 ? i - 250 : 0));
  std::optional<std::size_t> split = TwoLineSplit(s, 30);
  ASSERT_TRUE(split);
  EXPECT_NEAR(s.t[*split], 250, 1);
  LinearFit leak = FitLine(Since(s, s.t[*split]));
  EXPECT_NEAR(leak.slope, 1, 0.02);
  Series late;  // a leak of 20 s has no segment of 30 s yet: the split stays before it
  for (int i = 0; i < 300; ++i) late.t.push_back(i), late.v.push_back(i >= 280 ? i - 280 : 0);
  ASSERT_TRUE(TwoLineSplit(late, 30));
  EXPECT_LE(late.t[*TwoLineSplit(late, 30)], 270);
}

// A snapshot + window of one thermally throttled H100 and one idle-held A100.
struct Node {
  Snapshot snapshot;
  Window window{Window::Options{}};
};

void AddGpu(Node& node, FakeGpu g, unsigned index) {
  g.info.index = index;
  g.info.uuid = "GPU-" + std::to_string(index);
  for (const WindowPoint& p : g.points) node.window.Append(node.snapshot.gpus.size(), p);
  node.snapshot.gpus.push_back(g.info);
  node.snapshot.samples.push_back(g.latest);
}

void MakeNode(Node& node) {
  FakeGpu hot = MakeGpu(true);
  Fill(hot, 300, [](int i, Level& l) {
    if (i >= 60) l.reasons = 0x60, l.temp = 89, l.clock = 1700;
  });
  AddGpu(node, hot, 0);
  FakeGpu held = MakeGpu(false);
  held.latest.processes.push_back({77, "jupyter", static_cast<uint64_t>(20 * kGiB), {}, {}});
  Fill(held, 300, [](int, Level& l) { l.util = 0, l.power = 60, l.used_gib = 20; });
  AddGpu(node, held, 1);
  node.snapshot.timestamp = 1299;
}

TEST(Report, TextNamesVerdictEvidenceAndAction) {
  Node node;
  MakeNode(node);
  std::string text = FormatText(RunDiagnose(node.snapshot, node.window, {}));
  EXPECT_THAT(text, HasSubstr("GPU 0: NVIDIA H100 80GB HBM3 (GPU-0)"));
  EXPECT_THAT(text, HasSubstr("[thermal_throttle] confidence"));
  EXPECT_THAT(text, HasSubstr("thermal_reason_share 0.80 >= 0.10"));
  EXPECT_THAT(text, HasSubstr("action: Check airflow"));
  EXPECT_THAT(text, HasSubstr("[idle_held]"));
}

// A GPU in MIG mode has no whole-GPU utilization: the report says so and
// invents no load figure or verdict for the parent.
// Every finding says since when it holds, in the text and the JSON.
TEST(Report, FindingsSaySinceWhen) {
  FakeGpu g = MakeGpu(true);
  Fill(g, 300, [](int i, Level& l) {
    if (i >= 260) l.reasons = 0x60, l.clock = 1500;
  });
  std::vector<Finding> f = test_util::DiagnoseGpu(g);
  const Finding* thermal = FindKind(f, FindingKind::kThermalThrottle);
  ASSERT_NE(thermal, nullptr);
  EXPECT_NEAR(thermal->since_seconds, 40, 1.5);
  EXPECT_NEAR(thermal->since, g.points.back().t - 40, 1.5);
  GpuDiagnosis d;
  d.info = g.info, d.span_seconds = 299, d.findings = f;
  EXPECT_THAT(FormatText({d}), HasSubstr("39s before the window's end"));
  nlohmann::json j = nlohmann::json::parse(FormatJson({d}));
  EXPECT_NEAR(j["gpus"][0]["findings"][0]["since_seconds"].get<double>(), 40, 1.5);
  EXPECT_TRUE(j["gpus"][0]["findings"][0].contains("since"));
}

TEST(Report, MigParentWithoutUtilizationSaysSo) {
  Node node;
  FakeGpu mig = MakeGpu(true);
  mig.info.mig_enabled = true;
  Fill(mig, 120, [](int, Level&) {});
  for (WindowPoint& p : mig.points) p.present.reset(Index(Metric::kGpuUtil));
  mig.latest.Clear(Metric::kGpuUtil);
  AddGpu(node, mig, 0);
  std::vector<GpuDiagnosis> r = RunDiagnose(node.snapshot, node.window, {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].utilization);
  std::string text = FormatText(r);
  EXPECT_THAT(text, HasSubstr("utilization not available: MIG mode"));
  EXPECT_THAT(text, Not(HasSubstr("moderate, steady load")));
  EXPECT_THAT(text, Not(HasSubstr("compute_bound")));
  nlohmann::json j = nlohmann::json::parse(FormatJson(r));
  EXPECT_EQ(j["gpus"][0]["utilization_available"], false);
}

TEST(Report, SelectsSlotsAndWritesJson) {
  Node node;
  MakeNode(node);
  RunOptions o;
  o.slots = {1, 7};  // 7 does not exist: skipped
  std::vector<GpuDiagnosis> r = RunDiagnose(node.snapshot, node.window, o);
  ASSERT_EQ(r.size(), 1u);
  nlohmann::json j = nlohmann::json::parse(FormatJson(r));
  ASSERT_EQ(j["gpus"].size(), 1u);
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g["index"], 1);
  EXPECT_EQ(g["findings"][0]["kind"], "idle_held");
  EXPECT_GT(g["findings"][0]["confidence"].get<double>(), 0.5);
  // Idle-held rests on the trailing idle run (idle_held_seconds).
  EXPECT_EQ(g["findings"][0]["evidence"][0]["signal"], "idle_seconds");
  EXPECT_EQ(g["findings"][0]["evidence"][0]["comparison"], ">=");
  EXPECT_FALSE(g.contains("activity"));
}

// A GPU idle for the last minute after four of load has no finding yet; the
// report says what the window shows instead of "moderate, steady load".
TEST(Report, NoFindingLineDescribesARecentlyIdleWindow) {
  Node node;
  FakeGpu g = MakeGpu(true);
  g.latest.processes.push_back({77, "python3", static_cast<uint64_t>(60 * kGiB), {}, {}});
  Fill(g, 300, [](int i, Level& l) {
    l.util = i < 240 ? 55 : 0, l.sm = i < 240 ? 40 : 0, l.used_gib = 60;
  });
  AddGpu(node, g, 0);
  std::vector<GpuDiagnosis> r = RunDiagnose(node.snapshot, node.window, {});
  ASSERT_EQ(r.size(), 1u);
  ASSERT_TRUE(r[0].findings.empty());
  std::string text = FormatText(r);
  EXPECT_THAT(text, HasSubstr("no bottleneck found: idle for the last 1m00s after 4m00s at 55% "
                              "utilization, 60.0 GiB held (idle-held after 3m00s)"));
  EXPECT_THAT(text, Not(HasSubstr("steady")));
  nlohmann::json j = nlohmann::json::parse(FormatJson(r));
  EXPECT_THAT(j["gpus"][0]["activity"].get<std::string>(), HasSubstr("idle for the last 1m00s"));
}

// Under min_span_seconds of window the report says so, without a load verdict.
TEST(Report, ShortWindowSaysNoVerdictYet) {
  Node node;
  FakeGpu g = MakeGpu(true);
  Fill(g, 11, [](int, Level& l) { l.util = 50; });
  AddGpu(node, g, 0);
  std::string text = FormatText(RunDiagnose(node.snapshot, node.window, {}));
  EXPECT_THAT(text, HasSubstr("no verdict yet: the window covers 10 s of the 30 s the diagnosis "
                              "needs"));
  EXPECT_THAT(text, Not(HasSubstr("load")));
}

// Issue 44: a GPU that fell off the bus 4 s into the window is the finding,
// not "no verdict yet"; the agent's /api/v1/diagnosis says it the same way.
TEST(Report, LostGpuIsTheFinding) {
  Node node;
  FakeGpu g = MakeGpu(true);
  Fill(g, 5, [](int, Level& l) { l.util = 90; });
  g.info.pci_bus_id = "00000000:5D:00.0";
  g.latest.state = GpuState::kLost;
  g.latest.xid_counts[79] = 1;
  AddGpu(node, g, 3);
  std::vector<GpuDiagnosis> results = RunDiagnose(node.snapshot, node.window, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].findings.empty());
  const std::string sentence =
      "GPU 3 (00000000:5D:00.0) is lost (XID 79: fallen off the bus; NVML answers "
      "GPU_IS_LOST). Drain the node and reboot it; RMA if it recurs.";
  EXPECT_EQ(results[0].lost, sentence);
  std::string text = FormatText(results);
  EXPECT_THAT(text, HasSubstr("  GPU lost: " + sentence + "\n"));
  EXPECT_THAT(text, Not(HasSubstr("no verdict yet")));
  EXPECT_EQ(nlohmann::json::parse(FormatJson(results))["gpus"][0]["lost"], sentence);
}

// The agent's KPIs (serve's OTLP receiver) print under their GPU, before its
// findings, with the kpi_regression verdict; JSON carries them per GPU.
TEST(Report, KpisPrintUnderTheirGpu) {
  Node node;
  MakeNode(node);
  std::vector<GpuDiagnosis> r = RunDiagnose(node.snapshot, node.window, {});
  ASSERT_EQ(r.size(), 2u);
  KpiSummary step;
  step.kpi = "step_duration";
  step.family = "gpuscope_app_kpi_step_duration_seconds";
  step.workload = "train-a";
  step.count = 400, step.sum = 100;
  step.recent_mean = 0.3, step.baseline_mean = 0.2, step.change = 0.5, step.regressed = true;
  step.verdict =
      "kpi_regression: step_duration of train-a rose 50% (...); coincides with "
      "thermal_throttle on this GPU";
  r[0].kpis.push_back(step);
  std::string text = FormatText(r);
  std::size_t gpu0 = text.find("GPU 0:"), gpu1 = text.find("GPU 1:");
  std::size_t kpi = text.find("  kpi step_duration of train-a: mean 0.25 s over 400 observations");
  ASSERT_NE(kpi, std::string::npos) << text;
  EXPECT_LT(gpu0, kpi);
  EXPECT_LT(kpi, text.find("[thermal_throttle]"));
  EXPECT_LT(kpi, gpu1);
  EXPECT_THAT(text, HasSubstr("    kpi_regression: step_duration of train-a rose 50%"));
  EXPECT_EQ(text.find("kpi ", gpu1), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(FormatJson(r));
  const auto& k = j["gpus"][0]["kpis"][0];
  EXPECT_EQ(k["kpi"], "step_duration");
  EXPECT_DOUBLE_EQ(k["mean"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(k["change"].get<double>(), 0.5);
  EXPECT_EQ(k["regressed"], true);
  EXPECT_FALSE(j["gpus"][1].contains("kpis"));
}

// A GPU without findings whose request_duration KPI counted requests lately
// is serving; the KPI joins an activity line, never a finding.
TEST(Report, RequestsAnsweredLatelyMeanServing) {
  GpuDiagnosis d;
  d.activity = "idle for the last 20s after 4m40s at 7% utilization, 60.0 GiB held";
  KpiSummary step;
  step.kpi = "step_duration", step.recent_mean = 0.2;
  KpiSummary requests;
  requests.kpi = "request_duration", requests.workload = "vllm-a";
  requests.count = 900, requests.sum = 720, requests.recent_mean = 0.8;
  AddKpis(d, {step, requests});
  EXPECT_EQ(d.kpis.size(), 2u);
  EXPECT_EQ(d.activity,
            "serving: requests answered (request_duration of vllm-a: 0.8 s mean lately); idle for "
            "the last 20s after 4m40s at 7% utilization, 60.0 GiB held");
  // Without requests in the recent span (no recent mean), or with a finding: unchanged.
  GpuDiagnosis quiet;
  quiet.activity = "idle for the last 20s";
  requests.recent_mean.reset();
  AddKpis(quiet, {requests});
  EXPECT_EQ(quiet.activity, "idle for the last 20s");
  GpuDiagnosis held;
  held.findings.push_back(Finding{});
  requests.recent_mean = 0.8;
  AddKpis(held, {requests});
  EXPECT_TRUE(held.activity.empty());
}

TEST(Monitor, BottleneckFamiliesCoverEveryKind) {
  Node node;
  MakeNode(node);
  std::vector<prom::Family> fams = BottleneckFamilies(RunDiagnose(node.snapshot, node.window, {}));
  ASSERT_GE(fams.size(), 2u);
  EXPECT_EQ(fams[0].name, "gpuscope_bottleneck");
  EXPECT_EQ(fams[0].samples.size(), 2 * kFindingKindCount);
  EXPECT_EQ(fams[1].name, "gpuscope_bottleneck_confidence");
  double thermal = -1, idle = -1;
  for (const prom::Sample& s : fams[0].samples) {
    if (s.gpu == 0 && s.labels[0].second == "thermal_throttle") thermal = s.value;
    if (s.gpu == 0 && s.labels[0].second == "idle") idle = s.value;
  }
  EXPECT_EQ(thermal, 1);
  EXPECT_EQ(idle, 0);
}

TEST(Monitor, IntegratesIdleHeldTimeAndCost) {
  Node node;
  MakeNode(node);
  MonitorOptions o;
  o.gpu_hour_price = 2.0;
  DiagnosisMonitor m(o);
  for (int i = 0; i < 4; ++i) {
    node.snapshot.timestamp = 1000 + 30.0 * i;  // three 30 s intervals
    for (GpuSample& s : node.snapshot.samples) s.Set(Metric::kGpuUtil, s.Get(Metric::kGpuUtil));
    m.Update(node.snapshot, node.window);
  }
  EXPECT_DOUBLE_EQ(m.IdleHeldSeconds("GPU-1"), 90);
  EXPECT_DOUBLE_EQ(m.IdleHeldSeconds("GPU-0"), 0);
  std::vector<prom::Family> fams = m.Families();
  const prom::Family* cost = nullptr;
  for (const prom::Family& f : fams) {
    if (f.name == "gpuscope_wasted_cost_total") cost = &f;
  }
  ASSERT_NE(cost, nullptr);
  ASSERT_EQ(cost->samples.size(), 2u);
  for (const prom::Sample& s : cost->samples) {
    EXPECT_DOUBLE_EQ(s.value, s.gpu == 1 ? 90.0 / 3600 * 2.0 : 0.0);
  }
  EXPECT_EQ(m.Latest()->size(), 2u);
}

TEST(Monitor, LongGapsAreCapped) {
  Node node;
  MakeNode(node);
  DiagnosisMonitor m(MonitorOptions{});
  node.snapshot.timestamp = 1000;
  m.Update(node.snapshot, node.window);
  node.snapshot.timestamp = 5000;  // agent suspended for an hour
  m.Update(node.snapshot, node.window);
  EXPECT_DOUBLE_EQ(m.IdleHeldSeconds("GPU-1"), 60);
  for (const prom::Family& f : m.Families()) EXPECT_NE(f.name, "gpuscope_wasted_cost_total");
}

TEST(Monitor, IdleHeldNowNeedsHeldMemory) {
  GpuSample s;
  s.Set(Metric::kGpuUtil, 0);
  EXPECT_FALSE(IsIdleHeldNow(s));
  s.processes.push_back({1, "x", std::nullopt, {}, {}});
  s.Set(Metric::kMemoryUsed, 4 * kGiB);  // sizes hidden: the GPU's used memory counts
  EXPECT_TRUE(IsIdleHeldNow(s));
  s.Set(Metric::kGpuUtil, 40);
  EXPECT_FALSE(IsIdleHeldNow(s));
}

// The counter and the idle rules agree on what is held: a container without
// the host's PIDs sees no process, yet 40 GiB resident is held, not idle.
TEST(Monitor, IdleHeldNowCountsResidentMemoryWhenProcessesAreHidden) {
  GpuSample s;
  s.Set(Metric::kGpuUtil, 0);
  s.Set(Metric::kMemoryUsed, 40 * kGiB);
  EXPECT_TRUE(IsIdleHeldNow(s));
  EXPECT_EQ(HeldBytes(s), 40 * kGiB);
  s.Set(Metric::kMemoryUsed, 100 * 1024 * 1024);  // a bare context: not held
  EXPECT_FALSE(IsIdleHeldNow(s));
}

}  // namespace
}  // namespace gpuscope::analysis
