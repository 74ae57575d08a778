// The rule table (src/analysis/rules_table.h) against what the rules do:
// names round-trip and stay the wire names; every finding names only its
// row's inputs, and every input is named by some finding; evidence compares
// against the row's thresholds; the verdict and action come from the row; the
// table's stages and flags drive the evaluation; docs/diagnosis.md's rule and
// threshold tables are the generated ones (regenerate with
// GPUSCOPE_UPDATE_DOCS=1 build/<dir>/analysis_tests --gtest_filter='RuleTable.Docs*').
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis.h"
#include "analysis/rules_table.h"
#include "analysis_doc_block.h"
#include "analysis_test_util.h"

namespace gpuscope::analysis {
namespace {

using test_util::DiagnoseGpu;
using test_util::FakeGpu;
using test_util::Fill;
using test_util::kGiB;
using test_util::Level;
using test_util::MakeGpu;

void SetOnPoints(FakeGpu& g, Metric m, double v) {
  for (WindowPoint& p : g.points) {
    p.values[Index(m)] = static_cast<float>(v);
    p.present.set(Index(m));
  }
}

struct Case {
  std::string name;
  FakeGpu gpu;
};

FakeGpu Gpu(bool hopper, const std::function<void(int, Level&)>& at,
            const std::function<void(FakeGpu&)>& before = {}) {
  FakeGpu g = MakeGpu(hopper);
  if (before) before(g);
  Fill(g, 300, at);
  return g;
}

void HoldMemory(FakeGpu& g) {
  g.latest.processes.push_back({1234, "python3", static_cast<uint64_t>(60 * kGiB), {}, {}});
}

void NarrowPcie(FakeGpu& g) {
  g.latest.Set(Metric::kPcieLinkGen, 3);
  g.latest.Set(Metric::kPcieLinkWidth, 8);
}

// One window per rule and per variant (GPM or not, PCIe or NVLink), so that
// together they reach every input of every row.
std::vector<Case> Cases() {
  auto keep = [](int, Level&) {};
  // Nothing runs and nothing is resident.
  auto idle = [](int, Level& l) {
    l.util = 0, l.sm = 0, l.pcie_rx = 0, l.pcie_tx = 0, l.used_gib = 0;
  };
  auto waiting = [](int, Level& l) { l.util = 70, l.sm = 30, l.pcie_rx = 7.0e9; };
  std::vector<Case> out;
  out.push_back({"compute_gpm", Gpu(true, keep)});
  out.push_back({"compute_fallback", Gpu(false, keep)});
  out.push_back({"memory_full", Gpu(true, [](int, Level& l) { l.used_gib = 76; })});
  out.push_back({"bandwidth_gpm", Gpu(true, [](int, Level& l) { l.dram = 90, l.sm = 45; })});
  out.push_back({"bandwidth_fallback", Gpu(false, [](int, Level& l) { l.dram = 90; })});
  out.push_back({"thermal", Gpu(true, [](int i, Level& l) {
                   if (i >= 100) l.reasons = 0x60, l.temp = 89, l.clock = 1980 - (i - 100) * 1.5;
                 })});
  out.push_back(
      {"power", Gpu(
                    true, [](int, Level& l) { l.reasons = 0x4, l.power = 349, l.clock = 1300; },
                    [](FakeGpu& g) { g.latest.Set(Metric::kPowerLimit, 350); })});
  out.push_back({"pcie_gpm", Gpu(true, waiting, NarrowPcie)});
  out.push_back({"pcie_fallback", Gpu(false, waiting, NarrowPcie)});
  FakeGpu nvlink = Gpu(true, [](int, Level& l) { l.util = 70, l.sm = 30; });
  SetOnPoints(nvlink, Metric::kNvLinkRxBytesRate, 400e9);  // of 18 x 26.6 GB/s
  out.push_back({"nvlink", nvlink});
  out.push_back({"starved", Gpu(true, [](int i, Level& l) {
                   if (i % 12 >= 6) l.util = 3, l.sm = 2, l.pcie_rx = 2e8;
                 })});
  out.push_back({"idle_held", Gpu(
                                  true,
                                  [](int i, Level& l) {
                                    l.util = i < 100 ? 98 : 0, l.sm = i < 100 ? 85 : 0;
                                    l.used_gib = 60;
                                  },
                                  HoldMemory)});
  out.push_back({"idle", Gpu(true, idle)});
  // A vGPU host board whose three busy VMs wait two thirds of their time.
  FakeGpu sliced = Gpu(true, keep);
  SetOnPoints(sliced, Metric::kVgpuSchedulerWait, 0.67);
  SetOnPoints(sliced, Metric::kVgpuSchedulerRunlists, 3);
  SetOnPoints(sliced, Metric::kVgpuSchedulerPolicy, 1);
  SetOnPoints(sliced, Metric::kVgpuSchedulerTimeslice, 0.002);
  out.push_back({"vgpu_contention", sliced});
  // Equal share on a half-idle board: two busy VMs wait on their share's cap.
  FakeGpu capped = Gpu(true, [](int, Level& l) { l.util = 50, l.sm = 40; });
  SetOnPoints(capped, Metric::kVgpuSchedulerWait, 0.75);
  SetOnPoints(capped, Metric::kVgpuSchedulerRunlists, 2);
  SetOnPoints(capped, Metric::kVgpuSchedulerPolicy, 2);
  out.push_back({"vgpu_share_cap", capped});
  out.push_back({"idle_narrow_full", Gpu(
                                         true,
                                         [&idle](int i, Level& l) {
                                           idle(i, l);
                                           l.used_gib = 76;
                                         },
                                         NarrowPcie)});
  return out;
}

std::set<std::string> InputKeys(const Rule& r) {
  std::set<std::string> out;
  for (Metric m : r.inputs) out.emplace(Def(m).key);
  return out;
}

std::vector<FindingKind> Kinds(const std::vector<Finding>& findings) {
  std::vector<FindingKind> out;
  for (const Finding& f : findings) out.push_back(f.kind);
  return out;
}

TEST(RuleTable, NamesAreTheWireNamesAndRoundTrip) {
  // Metric labels, JSON and the .expect files carry these: never renamed.
  const std::vector<std::string> wire = {
      "compute_bound",      "memory_capacity", "memory_bandwidth", "thermal_throttle", "power_cap",
      "interconnect_bound", "pcie_degraded",   "starved",          "idle_held",        "idle",
      "vgpu_contention"};
  ASSERT_EQ(wire.size(), kFindingKindCount);
  for (std::size_t i = 0; i < kFindingKindCount; ++i) {
    FindingKind k = kAllFindingKinds[i];
    EXPECT_EQ(KindName(k), wire[i]);
    EXPECT_EQ(KindName(k), RuleFor(k).name);
    EXPECT_EQ(RuleFor(k).kind, k);
    EXPECT_NE(RuleFor(k).detect, nullptr) << wire[i];
    EXPECT_EQ(KindFromName(wire[i]), k);
  }
  EXPECT_FALSE(KindFromName("nope").has_value());
  EXPECT_FALSE(KindFromName("").has_value());
  EXPECT_FALSE(KindFromName("Idle").has_value());
}

TEST(RuleTable, EvaluationOrderRunsStageByStage) {
  std::set<FindingKind> seen;
  Stage last = Stage::kIdle;
  for (FindingKind k : kEvaluationOrder) {
    EXPECT_TRUE(seen.insert(k).second) << KindName(k);
    EXPECT_GE(RuleFor(k).stage, last) << KindName(k);
    last = RuleFor(k).stage;
  }
  EXPECT_EQ(seen.size(), kFindingKindCount);
  EXPECT_EQ(RuleFor(kEvaluationOrder.front()).stage, Stage::kIdle);
  EXPECT_EQ(RuleFor(kEvaluationOrder.back()).stage, Stage::kHealthy);
}

// Every finding names only its row's inputs and takes its headline and action
// from the row; together the cases reach every kind and every input, so a row
// that lists an input its rule never reads fails too.
TEST(RuleTable, FindingsRestOnTheirRowsInputs) {
  std::map<FindingKind, std::set<std::string>> used;
  for (const Case& c : Cases()) {
    for (const Finding& f : DiagnoseGpu(c.gpu)) {
      const Rule& r = RuleFor(f.kind);
      std::set<std::string> inputs = InputKeys(r);
      for (const std::string& s : f.signals) {
        EXPECT_TRUE(inputs.count(s))
            << c.name << ": " << r.name << " rests on " << s << ", not among its row's inputs";
        used[f.kind].insert(s);
      }
      EXPECT_THAT(f.verdict, ::testing::StartsWith(std::string(r.headline) + ": ")) << c.name;
      if (c.name != "nvlink" && c.name != "vgpu_share_cap") {  // their own actions
        EXPECT_EQ(f.action, r.action) << c.name;
      }
    }
  }
  for (const Rule& r : kRules) {
    EXPECT_EQ(used[r.kind], InputKeys(r)) << r.name << ": inputs no case reached, or none found";
  }
}

TEST(RuleTable, NvLinkGetsItsOwnAction) {
  for (const Case& c : Cases()) {
    if (c.name != "nvlink") continue;
    const std::vector<Finding> findings = DiagnoseGpu(c.gpu);
    const Finding* f = FindKind(findings, FindingKind::kInterconnect);
    ASSERT_NE(f, nullptr);
    EXPECT_THAT(f->verdict, ::testing::HasSubstr("NVLink at"));
    EXPECT_NE(f->action, RuleFor(FindingKind::kInterconnect).action);
    EXPECT_THAT(f->action, ::testing::HasSubstr("NVLink pairs"));
  }
}

// Evidence held against a threshold (ratios, counts, bytes: not those derived
// from the GPU, like its slowdown temperature or link maximum, nor options)
// uses a value the row lists, so the table shows what the rule compares. By
// value: two thresholds of one row with the same value (dram_high and
// mem_copy_high, 70%) cannot be told apart here.
TEST(RuleTable, EvidenceComparesAgainstTheRowsThresholds) {
  std::size_t checked = 0;
  for (const Case& c : Cases()) {
    for (const Finding& f : DiagnoseGpu(c.gpu)) {
      const Rule& r = RuleFor(f.kind);
      for (const Evidence& e : f.evidence) {
        if (e.comparison.empty() || (e.unit != "ratio" && e.unit != "count" && e.unit != "bytes")) {
          continue;
        }
        ++checked;
        bool listed = std::any_of(r.thresholds.begin(), r.thresholds.end(),
                                  [&e](const Threshold* t) { return t->value == e.threshold; });
        EXPECT_TRUE(listed) << c.name << ": " << r.name << "'s " << e.signal << " against "
                            << e.threshold << " is none of its row's thresholds";
      }
    }
  }
  EXPECT_GE(checked, 20u);
}

// Rule::limits: a limit found on a saturated GPU rules out compute-bound; a
// finding of a rule without it (memory capacity, a degraded link) does not.
TEST(RuleTable, LimitsRuleOutComputeBound) {
  std::set<FindingKind> limiting_seen, others_beside_compute;
  for (const Case& c : Cases()) {
    std::vector<Finding> f = DiagnoseGpu(c.gpu);
    bool compute = FindKind(f, FindingKind::kComputeBound) != nullptr;
    for (const Finding& x : f) {
      if (RuleFor(x.kind).limits) {
        limiting_seen.insert(x.kind);
        EXPECT_FALSE(compute) << c.name << ": compute_bound beside " << KindName(x.kind);
      } else if (compute && x.kind != FindingKind::kComputeBound) {
        others_beside_compute.insert(x.kind);
      }
    }
  }
  for (const Rule& r : kRules) {
    if (r.limits) {
      EXPECT_TRUE(limiting_seen.count(r.kind)) << r.name;
    }
  }
  EXPECT_TRUE(others_beside_compute.count(FindingKind::kMemoryCapacity));
  // A throttled GPU that is otherwise saturated: only the limit.
  FakeGpu hot = Gpu(true, [](int, Level& l) { l.reasons = 0x60, l.temp = 89, l.clock = 1700; });
  EXPECT_THAT(Kinds(DiagnoseGpu(hot)), ::testing::ElementsAre(FindingKind::kThermalThrottle));
}

// Stage::kIdle and Rule::when_idle: an idle GPU keeps its degraded link but
// not its full framebuffer (memory capacity is no idle rule); 76 GiB resident
// with no process visible is held, so idle-held.
TEST(RuleTable, IdleGpuKeepsOnlyWhenIdleRules) {
  for (const Case& c : Cases()) {
    if (c.name != "idle_narrow_full") continue;
    std::vector<FindingKind> kinds = Kinds(DiagnoseGpu(c.gpu));
    EXPECT_THAT(
        kinds, ::testing::UnorderedElementsAre(FindingKind::kIdleHeld, FindingKind::kPcieDegraded));
    for (FindingKind k : kinds) {
      EXPECT_TRUE(RuleFor(k).stage == Stage::kIdle || RuleFor(k).when_idle) << KindName(k);
    }
  }
}

// Rule::recent: every limit rule is judged over the recent horizons too (a
// power cap or a bandwidth pattern over the last 40 s of a 5-minute window is
// found), and so is the healthy verdict (next test); idle rules have their runs.
TEST(RuleTable, LimitRulesJudgeTheRecentHorizons) {
  for (const Rule& r : kRules) EXPECT_EQ(r.recent, r.stage != Stage::kIdle) << r.name;
  FakeGpu capped = Gpu(true, [](int i, Level& l) {
    if (i >= 260) l.reasons = 0x4, l.clock = 1500, l.power = 690;
  });
  EXPECT_NE(FindKind(DiagnoseGpu(capped), FindingKind::kPowerCap), nullptr);
  FakeGpu bound = Gpu(true, [](int i, Level& l) {
    if (i >= 260) l.dram = 90, l.sm = 45;
  });
  std::vector<Finding> findings = DiagnoseGpu(bound);
  const Finding* f = FindKind(findings, FindingKind::kMemoryBandwidth);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->since_seconds, 40, 1.5);
}

// compute_bound is judged over the recent horizons too: a GPU saturated for
// its last 60 s after four idle minutes is compute-bound since then; one
// starved or capped lately is not, however saturated the rest of the window.
TEST(RuleTable, ComputeBoundJudgesTheRecentHorizons) {
  for (bool hopper : {true, false}) {
    FakeGpu started = Gpu(hopper, [](int i, Level& l) {
      if (i < 240) l.util = 0, l.sm = 0, l.dram = 0, l.used_gib = 0.1;
    });
    std::vector<Finding> saturated = DiagnoseGpu(started);
    const Finding* f = FindKind(saturated, FindingKind::kComputeBound);
    ASSERT_NE(f, nullptr) << hopper;
    EXPECT_NEAR(f->since_seconds, 60, 1.5) << hopper;
    FakeGpu stalls = Gpu(hopper, [](int i, Level& l) {
      if (i >= 250 && i % 8 < 4) l.util = 2, l.sm = 1;
    });
    std::vector<Finding> findings = DiagnoseGpu(stalls);
    EXPECT_NE(FindKind(findings, FindingKind::kStarved), nullptr) << hopper;
    EXPECT_EQ(FindKind(findings, FindingKind::kComputeBound), nullptr) << hopper;
  }
  FakeGpu capped = Gpu(true, [](int i, Level& l) {
    if (i >= 260) l.reasons = 0x4, l.clock = 1500, l.power = 690;
  });
  EXPECT_EQ(FindKind(DiagnoseGpu(capped), FindingKind::kComputeBound), nullptr);
}

// A GPU nothing holds is idle once its trailing idle run reaches
// idle_run_seconds; a held one waits for idle_held_seconds (a pause is no waste).
TEST(RuleTable, IdleOnceNothingHoldsIt) {
  FakeGpu ended = Gpu(true, [](int i, Level& l) {
    if (i >= 260) l.util = 0, l.sm = 0, l.dram = 0, l.used_gib = 0.1;
  });
  std::vector<Finding> findings = DiagnoseGpu(ended);
  const Finding* f = FindKind(findings, FindingKind::kIdle);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->since_seconds, 40, 1.5);
  EXPECT_EQ(findings.size(), 1u);
  FakeGpu brief = Gpu(true, [](int i, Level& l) {
    if (i >= 280) l.util = 0, l.sm = 0, l.dram = 0, l.used_gib = 0.1;
  });
  EXPECT_EQ(FindKind(DiagnoseGpu(brief), FindingKind::kIdle), nullptr);
  FakeGpu paused = Gpu(true, [](int i, Level& l) {
    if (i >= 260) l.util = 0, l.sm = 0, l.dram = 0;
  });
  findings = DiagnoseGpu(paused);
  EXPECT_EQ(FindKind(findings, FindingKind::kIdle), nullptr);
  EXPECT_EQ(FindKind(findings, FindingKind::kIdleHeld), nullptr);
}

TEST(RuleTable, ThresholdsHaveNamesUnitsAndReasons) {
  std::map<std::string, const Threshold*> by_name;
  for (const Rule& r : kRules) {
    EXPECT_FALSE(r.thresholds.empty()) << r.name;
    for (const Threshold* t : r.thresholds) {
      auto [it, fresh] = by_name.emplace(std::string(t->name), t);
      EXPECT_TRUE(fresh || it->second == t) << t->name << " names two thresholds";
      EXPECT_GT(t->value, 0) << t->name;
      if (t->unit == "ratio" || t->unit == "points") {
        EXPECT_LE(t->value, 1) << t->name;
      }
      EXPECT_FALSE(t->why.empty()) << t->name;
    }
  }
  EXPECT_EQ(by_name.at("compute_sm_active")->value, 0.65);
}

TEST(RuleTable, DocsFindingsTableIsGenerated) {
  std::string table = RulesDocTable();
  for (const Rule& r : kRules) {
    EXPECT_THAT(table, ::testing::HasSubstr("| `" + std::string(r.name) + "` | "));
  }
  test_util::CheckDocBlock("<!-- diagnosis-rules:begin -->\n", "<!-- diagnosis-rules:end -->\n",
                           table, "analysis_tests --gtest_filter='RuleTable.Docs*'");
}

TEST(RuleTable, DocsThresholdsTableIsGenerated) {
  std::string table = ThresholdsDocTable();
  EXPECT_THAT(table, ::testing::HasSubstr("| `idle_held` | `held_min_bytes` | 256 MiB | "));
  EXPECT_THAT(table, ::testing::HasSubstr("| `compute_bound` | `steady_stddev` | 10 points | "));
  EXPECT_THAT(table, ::testing::HasSubstr("| `memory_capacity` | `oom_horizon` | 30m00s | "));
  test_util::CheckDocBlock("<!-- diagnosis-thresholds:begin -->\n",
                           "<!-- diagnosis-thresholds:end -->\n", table,
                           "analysis_tests --gtest_filter='RuleTable.Docs*'");
}

}  // namespace
}  // namespace gpuscope::analysis
