// Writes weeks of simulator history as OpenMetrics with timestamps, for
// `promtool tsdb create-blocks-from openmetrics` (tests/integration/
// test_baseline_history.py, docs/baselines.md).
//
// It drives the real agent code: the simulator's clock is stepped
// (collect::SampleSteps, one sampler cycle per step, 60 s by default), each
// cycle's snapshot gets the attribution the schedule gives and is rendered by
// the exporter's renderer (native families), and the sample lines of the
// families asked for are kept with the step's Unix time appended. A scrape
// would add instance and job; so does this, as labels.
//
//   gpuscope_baseline_history --nvml-lib SIM.so --scenario FILE --end UNIX
//       [--days 14] [--step 60] [--instance host:9400] [--job NAME]
//       [--gpus 0,1] --family NAME... --holder GPU:FROM_S:TO_S:NAMESPACE/WORKLOAD... > out.om
//
// --gpus samples only those GPUs (the simulator then steps only them), so
// several processes can write one node's history in parallel.
//
// FROM_S and TO_S are scenario seconds (the holder holds the GPU in
// [FROM_S, TO_S)). Exit 1 with a message on bad arguments or a failed run.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "collect/stepped.h"
#include "export/render.h"
#include "gpuscope/attribution.h"

namespace {

struct HolderSpan {
  size_t gpu = 0;
  double from = 0, to = 0;
  gpuscope::Holder holder;
};

struct Args {
  std::string nvml_lib, scenario, instance = "sim-node:9400", job;
  double end_unix = 0, days = 14, step = 60;
  std::set<std::string, std::less<>> families;
  std::vector<HolderSpan> holders;
  std::string gpus;  // nvidia-smi -i syntax; "" every GPU
  // --match FAMILY:LABEL:V1|V2: of FAMILY, only series whose LABEL is one of the values.
  std::vector<std::pair<std::string, std::vector<std::string>>> matches;  // family, label="v"
};

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "gpuscope_baseline_history: " << message << "\n";
  std::exit(1);
}

HolderSpan ParseHolder(const std::string& spec) {
  HolderSpan h;
  char ns[128] = {0}, wl[128] = {0};
  if (std::sscanf(spec.c_str(), "%zu:%lf:%lf:%127[^/]/%127s", &h.gpu, &h.from, &h.to, ns, wl) !=
      5) {
    Fail("--holder " + spec + ": want GPU:FROM_S:TO_S:NAMESPACE/WORKLOAD");
  }
  h.holder.namespace_name = ns;
  h.holder.workload = wl;
  // Pod and container stay unset: the baselines key on namespace and workload,
  // and two labels fewer per line keep weeks of history small.
  return h;
}

std::pair<std::string, std::vector<std::string>> ParseMatch(const std::string& spec) {
  size_t a = spec.find(':');
  size_t b = a == std::string::npos ? a : spec.find(':', a + 1);
  if (b == std::string::npos) Fail("--match " + spec + ": want FAMILY:LABEL:V1|V2");
  std::string label = spec.substr(a + 1, b - a - 1);
  std::vector<std::string> values;
  std::string rest = spec.substr(b + 1);
  for (size_t start = 0;;) {
    size_t bar = rest.find('|', start);
    values.push_back(label + "=\"" + rest.substr(start, bar - start) + "\"");
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return {spec.substr(0, a), values};
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Fail(flag + ": needs a value");
    std::string v = argv[++i];
    if (flag == "--nvml-lib")
      a.nvml_lib = v;
    else if (flag == "--scenario")
      a.scenario = v;
    else if (flag == "--end")
      a.end_unix = std::atof(v.c_str());
    else if (flag == "--days")
      a.days = std::atof(v.c_str());
    else if (flag == "--step")
      a.step = std::atof(v.c_str());
    else if (flag == "--instance")
      a.instance = v;
    else if (flag == "--job")
      a.job = v;
    else if (flag == "--family")
      a.families.insert(v);
    else if (flag == "--holder")
      a.holders.push_back(ParseHolder(v));
    else if (flag == "--gpus")
      a.gpus = v;
    else if (flag == "--match")
      a.matches.push_back(ParseMatch(v));
    else
      Fail("unknown flag " + flag);
  }
  if (a.nvml_lib.empty() || a.scenario.empty() || a.end_unix <= 0 || a.families.empty()) {
    Fail("need --nvml-lib, --scenario, --end and at least one --family");
  }
  if (!(a.step > 0) || !(a.days > 0)) Fail("--step and --days must be > 0");
  return a;
}

std::shared_ptr<const gpuscope::Attribution> AttributionAt(const Args& a,
                                                           const gpuscope::Snapshot& s, double t) {
  auto out = std::make_shared<gpuscope::Attribution>();
  for (const HolderSpan& h : a.holders) {
    for (const gpuscope::GpuInfo& gpu : s.gpus) {
      if (gpu.index == h.gpu && !gpu.is_mig() && t >= h.from && t < h.to) {
        out->holders[gpuscope::Attribution::DeviceKey(gpu)].push_back(h.holder);
      }
    }
  }
  return out;
}

// Keeps the sample lines of the wanted families, with instance, job and the
// timestamp added; writes each family's TYPE line once.
class Filter {
 public:
  Filter(const Args& a)
      : a_(a),
        extra_("instance=\"" + a.instance + "\"" +
               (a.job.empty() ? "" : ",job=\"" + a.job + "\"")) {}

  void Write(std::string_view body, double unix_time) {
    char ts[32];
    std::snprintf(ts, sizeof ts, " %.0f\n", unix_time);
    bool keep = false;
    while (!body.empty()) {
      size_t nl = body.find('\n');
      std::string_view line = body.substr(0, nl);
      body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
      if (line.starts_with("# TYPE ")) {
        std::string_view rest = line.substr(7);
        std::string_view name = rest.substr(0, rest.find(' '));
        // OpenMetrics names counter families without _total, info without _info.
        keep = a_.families.contains(name) || a_.families.contains(std::string(name) + "_total") ||
               a_.families.contains(std::string(name) + "_info");
        if (keep && typed_.insert(std::string(name)).second) out_ << line << "\n";
      } else if (keep && !line.empty() && line[0] != '#' && Matches(line)) {
        size_t brace = line.find('{');
        size_t space = line.find(' ');
        if (brace != std::string_view::npos && brace < space) {
          out_ << line.substr(0, brace + 1) << extra_ << ',' << line.substr(brace + 1);
        } else {
          out_ << line.substr(0, space) << '{' << extra_ << '}' << line.substr(space);
        }
        out_ << ts;
      }
    }
    if (out_.size() > (1 << 20)) Flush();
  }
  // Whether a sample line passes the --match filters of its family.
  bool Matches(std::string_view line) const {
    std::string_view name = line.substr(0, line.find_first_of("{ "));
    for (const auto& [family, values] : a_.matches) {
      if (name != family) continue;
      bool any = false;
      for (const std::string& v : values) any = any || line.find(v) != std::string_view::npos;
      if (!any) return false;
    }
    return true;
  }
  void Flush() {
    std::fwrite(out_.data(), 1, out_.size(), stdout);
    out_.clear();
  }

 private:
  const Args& a_;
  std::string extra_;
  std::set<std::string, std::less<>> typed_;
  struct Buffer {
    std::string s;
    Buffer& operator<<(std::string_view v) {
      s.append(v);
      return *this;
    }
    Buffer& operator<<(char c) {
      s.push_back(c);
      return *this;
    }
    size_t size() const { return s.size(); }
    const char* data() const { return s.data(); }
    void clear() { s.clear(); }
  } out_;
};

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  gpuscope::log::SetLevel(gpuscope::log::Level::kWarn);
  setenv("GPUSCOPE_SIM_SCENARIO", a.scenario.c_str(), 1);
  gpuscope::prom::RenderOptions ro;
  ro.metrics = gpuscope::prom::MetricSet::kNative;
  gpuscope::prom::Renderer renderer(ro);
  Filter filter(a);
  const double span = a.days * 86400;
  const double start_unix = a.end_unix - span;
  gpuscope::collect::SteppedOptions so;
  so.nvml_path = a.nvml_lib;
  so.start_seconds = 0;
  so.end_seconds = span;
  so.step_seconds = a.step;
  so.window_span_s = 10 * a.step;
  if (!a.gpus.empty()) {
    auto sel = gpuscope::collect::ParseSmiIds(a.gpus);
    if (!sel.ok()) Fail("--gpus: " + sel.status().message());
    so.devices = *sel;
  }
  so.on_step = [&](const gpuscope::SnapshotPtr& snap) {
    const double t = snap->timestamp;
    gpuscope::Snapshot copy = *snap;
    copy.attribution = AttributionAt(a, copy, t);
    auto body = renderer.Render(copy, {}, gpuscope::prom::Format::kOpenMetrics);
    filter.Write(*body, start_unix + t);
  };
  auto run = gpuscope::collect::SampleSteps(so);
  if (!run.ok()) Fail(run.status().message());
  filter.Flush();
  std::fputs("# EOF\n", stdout);
  return 0;
}
