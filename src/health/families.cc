#include "health/families.h"

#include <cmath>

#include "export/builtin_families.h"

namespace gpuscope::health {
namespace {

prom::Sample MakeSample(const GpuHealth& g, prom::Labels labels, double value) {
  prom::Sample s;
  s.gpu = static_cast<int>(g.slot);
  s.labels = std::move(labels);
  s.value = value;
  return s;
}

}  // namespace

std::vector<prom::Family> ToFamilies(const HealthReport& report, const FamilyOptions& options) {
  prom::Family health = prom::MakeFamily(prom::kGpuHealth);
  prom::Family stale = prom::MakeFamily(prom::kCollectorStale);
  // Lean profile: a check shows once it warned or failed, staleness once seen.
  health.detail = stale.detail = prom::Detail::kSparse;
  prom::Family window = prom::MakeFamily(prom::kXidWindow);
  window.help = options.xid_count_help;
  window.type = options.xid_count_type;
  const std::string window_ms = std::to_string(std::llround(report.xid_window_seconds * 1000));
  for (const GpuHealth& g : report.gpus) {
    for (const CheckResult& c : g.checks) {
      if (!c.evaluated) continue;
      health.samples.push_back(MakeSample(g, {{"check", std::string(CheckName(c.check))}},
                                          static_cast<double>(c.verdict)));
    }
    stale.samples.push_back(MakeSample(g, {}, g.stale ? 1 : 0));
    for (const auto& [xid, count] : g.xid_window) {
      window.samples.push_back(
          MakeSample(g, {{"xid", std::to_string(xid)}, {"window_size_in_ms", window_ms}},
                     static_cast<double>(count)));
    }
  }
  std::vector<prom::Family> out;
  out.push_back(std::move(health));
  out.push_back(std::move(stale));
  if (options.xid_count_window && !window.samples.empty()) out.push_back(std::move(window));
  return out;
}

void ApplyEvents(const EventState& events, Snapshot& snapshot) {
  for (const auto& [index, i] : WholeGpuSlots(snapshot)) {
    const GpuEvents* ev = events.Find(index);
    if (!ev) continue;
    GpuSample& sample = snapshot.samples[i];
    sample.xid_counts = ev->xid_counts;
    // dcgm-exporter reports 0 until the first XID.
    sample.Set(Metric::kXidLast, ev->last_xid.value_or(0));
  }
}

}  // namespace gpuscope::health
