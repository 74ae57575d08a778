// Ground truth: every scenario in sim/scenarios/diagnosis/ runs through the
// simulator, the sampler (scenario time stepped in-process) and the
// diagnosis; the findings are scored against the labels of its `.expect`
// sidecar, and the confusion matrix is printed (docs/diagnosis.md quotes it).
// A sidecar may set `window` (seconds diagnosed, default 300: a 10-minute
// window is `window: 600`) and `oom_eta` (per GPU the true seconds to OOM at
// `end`, from the scenario's leak rate and free memory): the finding's ETA
// must be within kEtaTolerance of it. A vGPU host board's virtual GPUs are
// labelled under `vgpus` (board position -> one list of kinds per instance,
// in NVML's order), and `scenario` names a scenario kept elsewhere (relative
// to the sidecar), so sim/scenarios/vgpu/ is scored without a copy.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "analysis/report.h"
#include "collect/stepped.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::analysis {
namespace {

namespace fs = std::filesystem;

// Acceptance: findings right overall and per class (TP / (TP + FP + FN)).
constexpr double kMinOverall = 0.95;
constexpr double kMinPerClass = 0.90;
// An OOM ETA within 20% (or 10 s) of the truth: the fit's slope is exact for
// a steady leak; the rest is the sampling of a 1 s series and the change
// point's position.
constexpr double kEtaTolerance = 0.20;
constexpr double kEtaToleranceSeconds = 10;

struct Expectation {
  std::string scenario;
  double end = 300;
  double window = 300;
  std::map<std::size_t, std::set<std::string>> gpus;  // position -> kinds
  std::map<std::size_t, double> oom_eta;              // position -> true seconds to OOM
  std::map<std::size_t, std::vector<std::set<std::string>>> vgpus;  // board -> instances
};

std::set<std::string> LoadKinds(const YAML::Node& list, const fs::path& sidecar) {
  std::set<std::string> kinds;
  for (const auto& k : list) {
    EXPECT_TRUE(KindFromName(k.as<std::string>())) << sidecar << ": " << k;
    kinds.insert(k.as<std::string>());
  }
  return kinds;
}

std::vector<Expectation> LoadExpectations(const fs::path& dir) {
  std::vector<Expectation> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".expect") continue;
    YAML::Node root = YAML::LoadFile(entry.path().string());
    Expectation e;
    e.scenario = root["scenario"] ? (dir / root["scenario"].as<std::string>()).string()
                                  : (dir / entry.path().stem()).string() + ".yaml";
    if (root["end"]) e.end = root["end"].as<double>();
    if (root["window"]) e.window = root["window"].as<double>();
    for (const auto& g : root["oom_eta"]) {
      e.oom_eta[g.first.as<std::size_t>()] = g.second.as<double>();
    }
    for (const auto& g : root["gpus"]) {
      e.gpus[g.first.as<std::size_t>()] = LoadKinds(g.second, entry.path());
    }
    for (const auto& board : root["vgpus"]) {
      for (const auto& instance : board.second) {
        e.vgpus[board.first.as<std::size_t>()].push_back(LoadKinds(instance, entry.path()));
      }
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const Expectation& a, const Expectation& b) { return a.scenario < b.scenario; });
  return out;
}

// Multi-label confusion: rows expected, columns found; a missed kind pairs with
// a spurious one on the same GPU when there is one, else with "none".
class Confusion {
 public:
  void Add(const std::set<std::string>& expected, const std::set<std::string>& found) {
    std::vector<std::string> missed, spurious;
    for (const std::string& k : expected) {
      if (found.count(k)) {
        ++cell_[{k, k}], ++tp_[k];
      } else {
        missed.push_back(k), ++fn_[k];
      }
    }
    for (const std::string& k : found) {
      if (!expected.count(k)) spurious.push_back(k), ++fp_[k];
    }
    std::size_t n = std::max(missed.size(), spurious.size());
    for (std::size_t i = 0; i < n; ++i) {
      ++cell_[{i < missed.size() ? missed[i] : "none", i < spurious.size() ? spurious[i] : "none"}];
    }
    if (expected.empty() && found.empty()) ++cell_[{"none", "none"}];
  }

  double Score(const std::string& k) const {
    double tp = Get(tp_, k), all = tp + Get(fp_, k) + Get(fn_, k);
    return all > 0 ? tp / all : 1;
  }
  double Overall() const {
    double tp = 0, all = 0;
    for (FindingKind kind : kAllFindingKinds) {
      std::string k(KindName(kind));
      tp += Get(tp_, k), all += Get(tp_, k) + Get(fp_, k) + Get(fn_, k);
    }
    return all > 0 ? tp / all : 1;
  }

  std::string Table() const {
    std::vector<std::string> names;
    for (FindingKind k : kAllFindingKinds) names.emplace_back(KindName(k));
    names.push_back("none");
    std::string out =
        fmt::format("| expected \\ found | {} | score |\n|---|", fmt::join(names, " | "));
    for (std::size_t i = 0; i <= names.size(); ++i) out += "---|";
    out += "\n";
    for (const std::string& row : names) {
      out += "| " + row + " |";
      for (const std::string& col : names) {
        auto it = cell_.find({row, col});
        out += fmt::format(" {} |", it == cell_.end() ? 0 : it->second);
      }
      out += row == "none" ? " |\n" : fmt::format(" {:.2f} |\n", Score(row));
    }
    return out +
           fmt::format("\noverall: {:.3f} (TP / (TP + FP + FN) over all findings)\n", Overall());
  }

 private:
  static double Get(const std::map<std::string, int>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  }
  std::map<std::pair<std::string, std::string>, int> cell_;
  std::map<std::string, int> tp_, fp_, fn_;
};

// Scores one GPU's (or virtual GPU's) findings against its labels.
void ScoreOne(const GpuDiagnosis& d, const std::set<std::string>& expected,
              const std::string& where, Confusion& confusion, std::string& mistakes) {
  std::set<std::string> found;
  for (const Finding& f : d.findings) {
    found.insert(std::string(KindName(f.kind)));
    EXPECT_GE(f.confidence, 0.0);
    EXPECT_LE(f.confidence, 1.0);
  }
  confusion.Add(expected, found);
  if (found != expected) {
    mistakes += fmt::format("  {}: expected [{}] found [{}]\n", where, fmt::join(expected, ", "),
                            fmt::join(found, ", "));
  }
  // A healthy compute-bound GPU must carry no throttling or bottleneck.
  if (expected == std::set<std::string>{"compute_bound"}) {
    EXPECT_EQ(found, expected) << where;
  }
}

TEST(GroundTruth, ScenarioSuite) {
  fs::path dir = fs::path(test_support::SourceDir()) / "sim/scenarios/diagnosis";
  std::vector<Expectation> suite = LoadExpectations(dir);
  ASSERT_GE(suite.size(), 10u);
  Confusion confusion;
  std::string mistakes;
  for (const Expectation& e : suite) {
    test_support::ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", e.scenario);
    collect::SteppedOptions o;
    o.nvml_path = test_support::SimLibraryPath();
    o.end_seconds = e.end;
    Result<collect::SteppedRun> run = collect::SampleSteps(o);
    ASSERT_TRUE(run.ok()) << e.scenario << ": " << run.status().message();
    RunOptions options;
    options.diagnose.window_seconds = e.window;
    std::vector<GpuDiagnosis> results =
        RunDiagnose(*run->snapshot, run->sampler->window(), options);
    ASSERT_EQ(results.size(), e.gpus.size()) << e.scenario << ": label every GPU";
    const std::string name = fs::path(e.scenario).filename().string();
    for (const GpuDiagnosis& d : results) {
      const std::set<std::string>& expected = e.gpus.at(d.slot);
      ScoreOne(d, expected, fmt::format("{} GPU {}", name, d.slot), confusion, mistakes);
      static const std::vector<std::set<std::string>> kNone;
      auto labelled = e.vgpus.find(d.slot);
      const auto& vgpus = labelled == e.vgpus.end() ? kNone : labelled->second;
      ASSERT_EQ(d.vgpus.size(), vgpus.size()) << name << " GPU " << d.slot << ": label every vGPU";
      for (std::size_t i = 0; i < vgpus.size(); ++i) {
        ScoreOne(d.vgpus[i], vgpus[i], fmt::format("{} GPU {} vGPU {}", name, d.slot, i), confusion,
                 mistakes);
      }
      if (auto truth = e.oom_eta.find(d.slot); truth != e.oom_eta.end()) {
        const Finding* f = FindKind(d.findings, FindingKind::kMemoryCapacity);
        std::optional<double> eta = f ? f->oom_eta_seconds : std::nullopt;
        std::printf("%s GPU %zu: OOM ETA %s s, truth %.0f s\n", name.c_str(), d.slot,
                    eta ? fmt::format("{:.0f}", *eta).c_str() : "none", truth->second);
        ASSERT_TRUE(eta) << e.scenario << " GPU " << d.slot << ": no OOM ETA";
        EXPECT_NEAR(*eta, truth->second,
                    std::max(kEtaToleranceSeconds, kEtaTolerance * truth->second))
            << e.scenario << " GPU " << d.slot;
      }
    }
  }
  std::string table = confusion.Table();
  std::printf("\nDiagnosis confusion matrix (%zu scenarios):\n%s", suite.size(), table.c_str());
  if (!mistakes.empty()) std::printf("Mismatches:\n%s", mistakes.c_str());
  EXPECT_GE(confusion.Overall(), kMinOverall);
  for (FindingKind k : kAllFindingKinds) {
    EXPECT_GE(confusion.Score(std::string(KindName(k))), kMinPerClass) << KindName(k);
  }
}

}  // namespace
}  // namespace gpuscope::analysis
