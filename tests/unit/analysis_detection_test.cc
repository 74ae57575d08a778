// Time to detect: the `.expect` sidecars of sim/scenarios/diagnosis/ may name
// in `onset` the scenario second each expected finding's condition begins
// (the fault or the workload segment). Each such scenario is sampled one
// scenario second at a time (collect::SampleSteps) and diagnosed at every
// step; the first step a finding appears gives its latency. `gpuscope serve`
// re-runs the diagnosis every MonitorOptions::diagnose_interval_seconds, so
// the latency plus that interval must meet the class's target (issues 12 and
// 40): every limit (thermal, power, interconnect, PCIe, memory capacity and
// bandwidth, starved), compute_bound and idle within 60 s of its onset
// whatever the window, idle_held within 210 s of the job going idle. A
// sidecar's `window` sets the window diagnosed (default 300 s;
// late-onsets-10m and onset-compute-10m use 600). A finding
// before its onset, or one that drops out again before the end, fails too.
// This is scenario time, not wall-clock.
//
// docs/diagnosis.md quotes the measured table between markers; regenerate it
// with GPUSCOPE_UPDATE_DOCS=1 build/<dir>/analysis_tests --gtest_filter='Detection.*'
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "analysis/monitor.h"
#include "analysis/report.h"
#include "analysis/rules.h"
#include "analysis_doc_block.h"
#include "collect/stepped.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::analysis {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBegin = "<!-- detection-latency:begin -->\n";
constexpr const char* kEnd = "<!-- detection-latency:end -->\n";

// Target per class, seconds from onset (classes not listed have none).
const std::map<std::string, double> kTargets = {
    {"thermal_throttle", 60}, {"power_cap", 60},       {"interconnect_bound", 60},
    {"pcie_degraded", 60},    {"memory_capacity", 60}, {"memory_bandwidth", 60},
    {"starved", 60},          {"compute_bound", 60},   {"idle", 60},
    {"idle_held", 210}};

struct Case {
  std::size_t gpu = 0;
  std::string kind;
  double onset = 0;
  std::string model;
  std::optional<double> found;  // first step with the finding
  std::optional<double> early;  // a step before the onset with it
  std::optional<double> lost;   // a step after `found` without it
};

struct OnsetScenario {
  fs::path yaml;
  double end = 300;
  double window = 300;
  std::vector<Case> cases;
};

std::vector<OnsetScenario> LoadOnsets(const fs::path& dir) {
  std::vector<OnsetScenario> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".expect") continue;
    YAML::Node root = YAML::LoadFile(entry.path().string());
    if (!root["onset"]) continue;
    OnsetScenario s;
    s.yaml = dir / (entry.path().stem().string() + ".yaml");
    if (root["end"]) s.end = root["end"].as<double>();
    if (root["window"]) s.window = root["window"].as<double>();
    for (const auto& g : root["onset"]) {
      for (const auto& k : g.second) {
        Case c;
        c.gpu = g.first.as<std::size_t>();
        c.kind = k.first.as<std::string>();
        c.onset = k.second.as<double>();
        EXPECT_TRUE(KindFromName(c.kind)) << entry.path() << ": " << c.kind;
        EXPECT_TRUE(kTargets.count(c.kind)) << entry.path() << ": no target for " << c.kind;
        s.cases.push_back(c);
      }
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const OnsetScenario& a, const OnsetScenario& b) { return a.yaml < b.yaml; });
  return out;
}

void Observe(const std::vector<GpuDiagnosis>& results, double t, Case& c) {
  bool has = false;
  for (const GpuDiagnosis& d : results) {
    if (d.slot != c.gpu) continue;
    if (c.model.empty()) c.model = d.info.name;
    std::optional<FindingKind> kind = KindFromName(c.kind);
    has = kind && FindKind(d.findings, *kind) != nullptr;
  }
  if (has && t < c.onset && !c.early) c.early = t;
  if (has && t >= c.onset && !c.found) c.found = t;
  if (!has && c.found && !c.lost) c.lost = t;
}

void SampleAndDiagnose(OnsetScenario& s) {
  test_support::ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", s.yaml.string());
  collect::SteppedOptions o;
  o.nvml_path = test_support::SimLibraryPath();
  o.end_seconds = s.end;
  o.window_span_s = s.window + 10;
  RunOptions options;
  options.diagnose.window_seconds = s.window;
  o.on_step_window = [&s, &options](const SnapshotPtr& snap, const Window& window) {
    std::vector<GpuDiagnosis> results = RunDiagnose(*snap, window, options);
    for (Case& c : s.cases) Observe(results, snap->timestamp, c);
  };
  Result<collect::SteppedRun> run = collect::SampleSteps(o);
  ASSERT_TRUE(run.ok()) << s.yaml << ": " << run.status().message();
}

std::string Table(const std::vector<OnsetScenario>& suite, double cadence) {
  std::string out = fmt::format(
      "| class | scenario | window | GPU | onset (s) | found at (s) | latency (s) | + serve's "
      "{:.0f} s cadence | target (s) |\n|---|---|---|---|---|---|---|---|---|\n",
      cadence);
  std::map<std::string, double> worst;
  for (const OnsetScenario& s : suite) {
    for (const Case& c : s.cases) {
      double latency = c.found ? *c.found - c.onset : -1;
      worst[c.kind] = std::max(worst[c.kind], latency + cadence);
      out += fmt::format("| {} | {} | {} | {} {} | {:.0f} | {} | {} | {} | {:.0f} |\n", c.kind,
                         s.yaml.stem().string(), Duration(s.window), c.gpu, c.model, c.onset,
                         c.found ? fmt::format("{:.0f}", *c.found) : "never",
                         c.found ? fmt::format("{:.0f}", latency) : "-",
                         c.found ? fmt::format("{:.0f}", latency + cadence) : "-",
                         kTargets.at(c.kind));
    }
  }
  out += "\nWorst case per class, with the cadence: ";
  std::vector<std::string> parts;
  for (const auto& [kind, w] : worst) {
    parts.push_back(fmt::format("{} {:.0f} s (target {:.0f} s)", kind, w, kTargets.at(kind)));
  }
  return out + fmt::format("{}.\n", fmt::join(parts, "; "));
}

TEST(Detection, LatencyFromOnsetMeetsTargets) {
  fs::path dir = fs::path(test_support::SourceDir()) / "sim/scenarios/diagnosis";
  std::vector<OnsetScenario> suite = LoadOnsets(dir);
  ASSERT_GE(suite.size(), 8u);
  std::map<std::string, int> classes;
  for (OnsetScenario& s : suite) {
    SampleAndDiagnose(s);
    for (const Case& c : s.cases) {
      ++classes[c.kind];
      std::string where = fmt::format("{} GPU {} {}", s.yaml.filename().string(), c.gpu, c.kind);
      EXPECT_FALSE(c.early) << where << ": found at " << c.early.value_or(0)
                            << " s, before its onset at " << c.onset << " s";
      ASSERT_TRUE(c.found) << where << ": never found";
      EXPECT_FALSE(c.lost) << where << ": found at " << *c.found << " s, gone again at "
                           << c.lost.value_or(0) << " s";
      double cadence = MonitorOptions{}.diagnose_interval_seconds;
      EXPECT_LE(*c.found - c.onset + cadence, kTargets.at(c.kind))
          << where << ": onset " << c.onset << " s, found at " << *c.found << " s";
    }
  }
  // Every class with a target is measured.
  for (const auto& [kind, target] : kTargets) {
    if (kind == "pcie_degraded") continue;  // a link fault, measured where a scenario has one
    EXPECT_GE(classes[kind], 1) << kind << " has no onset scenario";
  }
  std::string table = Table(suite, MonitorOptions{}.diagnose_interval_seconds);
  std::printf("\nDetection latency:\n%s", table.c_str());
  test_util::CheckDocBlock(kBegin, kEnd, table, "analysis_tests --gtest_filter='Detection.*'");
}

}  // namespace
}  // namespace gpuscope::analysis
