#include "serve/kpi_join.h"

#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include "export/builtin_families.h"

namespace gpuscope::serve {
namespace {

// Where the last whole series of `lines` ends within `avail` bytes, and how
// many series start at or after that point. A histogram series ends with its
// `_count` line, or with its +Inf bucket when it has no sum (otlp/store.cc:
// negative bounds or sum); any other family has one line per series.
std::pair<std::size_t, uint64_t> SeriesCut(const prom::Family& family, std::size_t avail) {
  const std::string& lines = *family.lines;
  const bool histogram = family.type == prom::FamilyType::kHistogram;
  const std::string count_line = family.name + "_count{";
  const std::string sum_line = family.name + "_sum{";
  std::size_t cut = 0;
  uint64_t after = 0;
  for (std::size_t pos = 0; pos < lines.size();) {
    std::size_t eol = lines.find('\n', pos);
    eol = eol == std::string::npos ? lines.size() : eol + 1;
    const std::string_view line = std::string_view(lines).substr(pos, eol - pos);
    const bool last_bucket = line.find("le=\"+Inf\"}") != std::string_view::npos &&
                             !std::string_view(lines).substr(eol).starts_with(sum_line);
    const bool ends_series = !histogram || line.starts_with(count_line) || last_bucket;
    if (ends_series && eol <= avail && after == 0) {
      cut = eol;
    } else if (ends_series) {
      ++after;  // a series that does not fit, and every one after it
    }
    pos = eol;
  }
  return {cut, after};
}

// The GPU findings that can explain a KPI, per slot: everything but the healthy and idle states.
std::vector<std::vector<std::string>> CausesOf(const Snapshot& snapshot,
                                               std::span<const analysis::GpuDiagnosis> diag) {
  std::vector<std::vector<std::string>> causes(snapshot.gpus.size());
  for (const analysis::GpuDiagnosis& d : diag) {
    if (d.slot >= causes.size()) continue;
    for (const analysis::Finding& f : d.findings) {
      if (f.kind == analysis::FindingKind::kComputeBound ||
          f.kind == analysis::FindingKind::kIdle) {
        continue;
      }
      causes[d.slot].emplace_back(analysis::KindName(f.kind));
    }
  }
  return causes;
}

prom::Family Omitted(uint64_t metrics_bytes, std::size_t regression_keys) {
  prom::Family f = prom::MakeFamily(prom::kAppSeriesOmitted);
  f.samples.push_back({-1, {{"limit", "metrics_bytes"}}, static_cast<double>(metrics_bytes)});
  f.samples.push_back({-1, {{"limit", "regression_keys"}}, static_cast<double>(regression_keys)});
  return f;
}

}  // namespace

std::vector<prom::Family> CapFamilies(std::vector<prom::Family> families, std::size_t max_bytes,
                                      uint64_t* omitted) {
  std::vector<prom::Family> out;
  std::size_t used = 0;
  for (prom::Family& f : families) {
    if (!f.lines) {  // the receiver's self-metrics: a few samples
      out.push_back(std::move(f));
      continue;
    }
    const std::size_t header = 2 * f.name.size() + f.help.size() + 32;  // # HELP, # TYPE
    const std::size_t avail = used + header < max_bytes ? max_bytes - used - header : 0;
    if (f.lines->size() <= avail) {
      used += header + f.lines->size();
      out.push_back(std::move(f));
      continue;
    }
    auto [cut, after] = SeriesCut(f, avail);
    *omitted += after;
    if (cut == 0) continue;
    used += header + cut;
    f.lines = std::make_shared<const std::string>(f.lines->substr(0, cut));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<web::KpiReading> KpisOf(const std::vector<otlp::KpiReading>& readings,
                                    const std::vector<otlp::KpiFinding>& findings,
                                    std::size_t max) {
  using Key = std::tuple<int, std::string_view, std::string_view>;  // rank, family, workload
  std::map<Key, const otlp::KpiFinding*> index;
  for (const otlp::KpiFinding& f : findings) index[{f.rank, f.family, f.workload}] = &f;
  std::vector<web::KpiReading> out;
  for (const otlp::KpiReading& r : readings) {
    if (r.rank < 0) continue;  // not attributed to a GPU
    if (out.size() >= max) break;
    web::KpiReading k;
    k.slot = static_cast<std::size_t>(r.rank);
    k.summary.kpi = std::string(otlp::KpiName(r.kpi));
    k.summary.family = r.family;
    k.summary.workload = r.workload;
    k.summary.count = r.count;
    k.summary.sum = r.sum;
    if (auto it = index.find({r.rank, r.family, r.workload}); it != index.end()) {
      const otlp::KpiFinding& f = *it->second;
      k.summary.recent_mean = f.recent;
      k.summary.baseline_mean = f.baseline;
      k.summary.change = f.change;
      k.summary.regressed = f.regressed;
      k.summary.verdict = f.verdict;
    }
    out.push_back(std::move(k));
  }
  return out;
}

KpiJoin::KpiJoin(KpiJoinOptions options, otlp::Store& store, InputSource inputs,
                 collect::Clock clock)
    : options_(std::move(options)),
      store_(store),
      inputs_(std::move(inputs)),
      clock_(clock ? std::move(clock) : collect::Clock(collect::SystemClock)),
      tracker_(options_.regression) {}

KpiJoin::~KpiJoin() { Stop(); }

void KpiJoin::Start() { worker_.Start(); }

void KpiJoin::Stop() { worker_.Stop(); }

void KpiJoin::Wake() { worker_.Offer({}); }

void KpiJoin::RunOnce() {
  const Inputs in = inputs_();
  if (!in.snapshot) return;
  const double now = clock_();
  auto result = std::make_shared<KpiResult>();
  uint64_t omitted = 0;
  // The store stops building lines near the cap (its estimate), the cap cuts exactly.
  result->families =
      CapFamilies(store_.Families(*in.snapshot, now, options_.max_metrics_bytes, &omitted),
                  options_.max_metrics_bytes, &omitted);
  if (!options_.receiver_metrics) {
    std::erase_if(result->families,
                  [](const prom::Family& f) { return f.name.starts_with("gpuscope_otlp_"); });
  }
  const std::vector<otlp::KpiReading> readings = store_.Readings();
  tracker_.Update(readings, now);
  const std::vector<otlp::KpiFinding> findings = tracker_.Evaluate(
      now, CausesOf(*in.snapshot, in.diagnoses ? std::span(*in.diagnoses)
                                               : std::span<const analysis::GpuDiagnosis>()));
  result->kpis = KpisOf(readings, findings, options_.regression.max_keys);
  for (prom::Family& f : otlp::RegressionTracker::Families(findings)) {
    result->families.push_back(std::move(f));
  }
  if (options_.receiver_metrics) result->families.push_back(Omitted(omitted, tracker_.untracked()));
  latest_.store(std::move(result));
  joins_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace gpuscope::serve
