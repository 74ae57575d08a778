// gpuscope_bench --mode=detection (bench/detection.h): every scenario of
// sim/scenarios/diagnosis whose .expect names an `onset` runs through the
// simulator one scenario second at a time; at each step `diagnose`'s
// RunDiagnose and serve's Exporter (monitor + full-profile /metrics body)
// see the same snapshot and window. A case's latency is the first step the
// finding shows (diagnose) or its gpuscope_bottleneck series reads 1 (serve),
// minus the onset. A Prometheus scrape adds up to one scrape interval more.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "bench_common.h"
#include "collect/stepped.h"
#include "detection.h"
#include "export/profile.h"
#include "serve/exporter.h"

namespace gpuscope::bench {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string scenario;
  std::size_t gpu = 0;
  std::string kind;
  double onset = 0;
  double window = 300;
  std::optional<double> diagnose, serve;  // first step found
};

// Whether the body has gpuscope_bottleneck{gpu="<gpu>",...,kind="<kind>"} 1.
bool Exported(const std::string& body, std::size_t gpu, const std::string& kind) {
  const std::string gpu_label = fmt::format("gpu=\"{}\"", gpu);
  const std::string kind_label = fmt::format("kind=\"{}\"", kind);
  std::size_t at = 0;
  while ((at = body.find("\ngpuscope_bottleneck{", at)) != std::string::npos) {
    const std::size_t end = body.find('\n', at + 1);
    const std::string line = body.substr(at + 1, end - at - 1);
    at = end;
    if (line.find(gpu_label) != std::string::npos && line.find(kind_label) != std::string::npos) {
      return line.size() >= 2 && line.compare(line.size() - 2, 2, " 1") == 0;
    }
  }
  return false;
}

// Runs one scenario and fills its cases' first steps.
bool Measure(const fs::path& yaml, double end, double window, std::vector<Case*>& cases) {
  setenv("GPUSCOPE_SIM_SCENARIO", yaml.c_str(), 1);
  double now = 0;
  serve::ExporterOptions options;
  options.render.profile = prom::Profile::kFull;
  options.monitor.diagnose.window_seconds = window;
  serve::Exporter exporter(options, [&now] { return now; });
  analysis::RunOptions run;
  run.diagnose.window_seconds = window;
  collect::SteppedOptions o;
  o.nvml_path = SimLibrary();
  o.end_seconds = end;
  o.window_span_s = window + 10;
  o.on_step_window = [&](const SnapshotPtr& snap, const Window& w) {
    now = snap->timestamp;
    std::vector<analysis::GpuDiagnosis> results = analysis::RunDiagnose(*snap, w, run);
    exporter.OnSnapshot(snap, w);
    std::shared_ptr<const std::string> body = exporter.Current()->Body(prom::Format::kText);
    for (Case* c : cases) {
      std::optional<analysis::FindingKind> kind = analysis::KindFromName(c->kind);
      for (const analysis::GpuDiagnosis& d : results) {
        if (d.slot == c->gpu && kind && analysis::FindKind(d.findings, *kind) && !c->diagnose &&
            snap->timestamp >= c->onset) {
          c->diagnose = snap->timestamp;
        }
      }
      if (!c->serve && snap->timestamp >= c->onset && Exported(*body, c->gpu, c->kind)) {
        c->serve = snap->timestamp;
      }
    }
  };
  Result<collect::SteppedRun> result = collect::SampleSteps(o);
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", yaml.c_str(), result.status().message().c_str());
    return false;
  }
  return true;
}

std::string Latency(const std::optional<double>& found, double onset) {
  return found ? fmt::format("{:.0f}", *found - onset) : "null";
}

}  // namespace

int RunDetectionLatency() {
  const fs::path dir = ExeDir() + "/sim/scenarios/diagnosis";
  std::vector<fs::path> expects;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".expect") expects.push_back(entry.path());
  }
  std::sort(expects.begin(), expects.end());
  std::vector<Case> all;
  all.reserve(256);
  for (const fs::path& expect : expects) {
    YAML::Node root = YAML::LoadFile(expect.string());
    if (!root["onset"]) continue;
    const double end = root["end"] ? root["end"].as<double>() : 300;
    const double window = root["window"] ? root["window"].as<double>() : 300;
    std::vector<Case*> cases;
    for (const auto& g : root["onset"]) {
      for (const auto& k : g.second) {
        all.push_back({expect.stem().string(),
                       g.first.as<std::size_t>(),
                       k.first.as<std::string>(),
                       k.second.as<double>(),
                       window,
                       {},
                       {}});
        cases.push_back(&all.back());
      }
    }
    const fs::path yaml = dir / (expect.stem().string() + ".yaml");
    if (!Measure(yaml, end, window, cases)) return 1;
  }
  std::map<std::string, std::pair<double, double>> worst;  // kind -> diagnose, serve
  std::string out = "{\"cases\": [";
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    out += fmt::format(
        "{}\n {{\"scenario\": \"{}\", \"gpu\": {}, \"kind\": \"{}\", \"window\": {:.0f}, "
        "\"onset\": {:.0f}, \"diagnose_s\": {}, \"serve_s\": {}}}",
        i ? "," : "", c.scenario, c.gpu, c.kind, c.window, c.onset, Latency(c.diagnose, c.onset),
        Latency(c.serve, c.onset));
    auto& w = worst[c.kind];
    w.first = std::max(w.first, c.diagnose ? *c.diagnose - c.onset : 1e9);
    w.second = std::max(w.second, c.serve ? *c.serve - c.onset : 1e9);
  }
  out += "],\n\"worst\": {";
  bool first = true;
  for (const auto& [kind, w] : worst) {
    out += fmt::format("{}\n \"{}\": {{\"diagnose_s\": {:.0f}, \"serve_s\": {:.0f}}}",
                       first ? "" : ",", kind, w.first, w.second);
    first = false;
  }
  std::printf("%s}}\n", out.c_str());
  return 0;
}

}  // namespace gpuscope::bench
