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

// DCGM's watch systems that a gpuscope check covers, with the DCGM_FR_* code
// dcgm-exporter's health_error_code shows for a warning or failure there.
struct HealthWatch {
  Check check;
  std::string_view watch;
  std::string_view warn_code, fail_code;
};
constexpr HealthWatch kHealthWatches[] = {
    {Check::kPcie, "PCIE", "DCGM_FR_PCI_REPLAY_RATE", "DCGM_FR_PCI_REPLAY_RATE"},
    {Check::kNvlink, "NVLINK", "DCGM_FR_NVLINK_ERROR_THRESHOLD", "DCGM_FR_NVLINK_DOWN"},
    {Check::kMemory, "MEM", "DCGM_FR_PENDING_ROW_REMAP", "DCGM_FR_VOLATILE_DBE_DETECTED"},
    {Check::kThermal, "THERMAL", "DCGM_FR_CLOCK_THROTTLE_THERMAL", "DCGM_FR_TEMP_VIOLATION"},
    {Check::kPower, "POWER", "DCGM_FR_CLOCK_THROTTLE_POWER", "DCGM_FR_POWER_UNREADABLE"},
    {Check::kDriver, "DRIVER", "DCGM_FR_XID_ERROR", "DCGM_FR_XID_ERROR"},
};

// DCGM_HEALTH_RESULT_PASS, _WARN, _FAIL.
double DcgmHealthResult(Verdict v) { return v == Verdict::kOk ? 0 : v == Verdict::kWarn ? 10 : 20; }

void AddHealthStatus(const GpuHealth& g, prom::Family& family) {
  for (const HealthWatch& w : kHealthWatches) {
    const CheckResult& c = g.Get(w.check);
    if (!c.evaluated) continue;
    std::string_view code = c.verdict == Verdict::kOk     ? "DCGM_FR_OK"
                            : c.verdict == Verdict::kWarn ? w.warn_code
                                                          : w.fail_code;
    family.samples.push_back(MakeSample(
        g, {{"health_watch", std::string(w.watch)}, {"health_error_code", std::string(code)}},
        DcgmHealthResult(c.verdict)));
  }
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
  prom::Family status = prom::MakeFamily(prom::kGpuHealthStatus);
  status.help = options.health_status_help;
  status.type = options.health_status_type;
  prom::Family up_since = prom::MakeFamily(prom::kGpuUpSince);
  prom::Family link_down = prom::MakeFamily(prom::kLinkFailure);
  const std::string window_ms = std::to_string(std::llround(report.xid_window_seconds * 1000));
  for (const GpuHealth& g : report.gpus) {
    for (const CheckResult& c : g.checks) {
      if (!c.evaluated) continue;
      health.samples.push_back(MakeSample(g, {{"check", std::string(CheckName(c.check))}},
                                          static_cast<double>(c.verdict)));
    }
    stale.samples.push_back(MakeSample(g, {}, g.stale ? 1 : 0));
    // Only while a link is not up, the time that tells training from down
    // (no series per GPU otherwise: the lean profile's budget).
    if (g.up_since > 0 && !g.nvlinks_not_up.empty()) {
      up_since.samples.push_back(MakeSample(g, {}, g.up_since));
    }
    for (const auto& [link, down] : g.nvlinks_not_up) {
      link_down.samples.push_back(MakeSample(g, {{"link", std::to_string(link)}}, down ? 1 : 0));
    }
    if (options.health_status) AddHealthStatus(g, status);
    for (const auto& [xid, count] : g.xid_window) {
      window.samples.push_back(
          MakeSample(g, {{"xid", std::to_string(xid)}, {"window_size_in_ms", window_ms}},
                     static_cast<double>(count)));
    }
  }
  std::vector<prom::Family> out;
  out.push_back(std::move(health));
  out.push_back(std::move(stale));
  if (!up_since.samples.empty()) out.push_back(std::move(up_since));
  if (!link_down.samples.empty()) out.push_back(std::move(link_down));
  if (options.xid_count_window && !window.samples.empty()) out.push_back(std::move(window));
  if (options.health_status && !status.samples.empty()) out.push_back(std::move(status));
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
