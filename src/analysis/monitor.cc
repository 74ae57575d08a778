#include "analysis/monitor.h"

#include <algorithm>

#include "analysis/rules_thresholds.h"
#include "analysis/signals.h"
#include "export/builtin_families.h"

namespace gpuscope::analysis {
namespace {

// The diagnosis's idle point (signals.h), in the samples' percent.
constexpr double kIdlePercent = kIdleUtil * 100;
constexpr double kSecondsPerHour = 3600;

}  // namespace

std::string GpuKey(const GpuInfo& info) {
  return info.mig_uuid.empty() ? info.uuid : info.uuid + "/" + info.mig_uuid;
}

std::vector<prom::Family> BottleneckFamilies(const std::vector<GpuDiagnosis>& results) {
  prom::Family found = prom::MakeFamily(prom::kBottleneck);
  prom::Family conf = prom::MakeFamily(prom::kBottleneckConfidence);
  prom::Family eta = prom::MakeFamily(prom::kOomEta);
  // Lean profile: the confidence alone, once the kind was found (> 0 means
  // found, so the 0/1 family adds nothing to a query).
  found.detail = prom::Detail::kFullOnly;
  conf.detail = prom::Detail::kSparse;
  for (const GpuDiagnosis& d : results) {
    int gpu = static_cast<int>(d.slot);
    for (FindingKind k : kAllFindingKinds) {
      const Finding* f = FindKind(d.findings, k);
      prom::Labels labels = {{"kind", std::string(KindName(k))}};
      found.samples.push_back({gpu, labels, f ? 1.0 : 0.0});
      conf.samples.push_back({gpu, labels, f ? f->confidence : 0.0});
    }
    for (const Finding& f : d.findings) {
      if (f.oom_eta_seconds) eta.samples.push_back({gpu, {}, *f.oom_eta_seconds});
    }
  }
  std::vector<prom::Family> out = {std::move(found), std::move(conf)};
  if (!eta.samples.empty()) out.push_back(std::move(eta));
  return out;
}

bool IsIdleHeldNow(const GpuSample& sample) {
  // A MIG instance has no utilization of its own: its GPM activity says it.
  const Metric activity = sample.Has(Metric::kGpuUtil) ? Metric::kGpuUtil : Metric::kGrEngineActive;
  if (sample.state != GpuState::kOk || !sample.Has(activity)) return false;
  if (sample.Get(activity) >= kIdlePercent) return false;
  if (sample.Has(Metric::kSmActive) && sample.Get(Metric::kSmActive) >= kIdlePercent) return false;
  return HeldBytes(sample).value_or(0) >= kHeldMinBytes.value;
}

DiagnosisMonitor::DiagnosisMonitor(MonitorOptions options)
    : options_(std::move(options)), bottleneck_(BottleneckFamilies(*latest_)) {}

void DiagnosisMonitor::Update(const Snapshot& snapshot, const Window& window) {
  bool rerun = !last_diagnosis_ ||
               snapshot.timestamp - *last_diagnosis_ >= options_.diagnose_interval_seconds ||
               snapshot.timestamp < *last_diagnosis_;
  std::shared_ptr<const std::vector<GpuDiagnosis>> results;
  std::vector<prom::Family> bottleneck;
  if (rerun) {
    results = std::make_shared<const std::vector<GpuDiagnosis>>(
        RunDiagnose(snapshot, window, {options_.diagnose, {}}));
    bottleneck = BottleneckFamilies(*results);
  }
  std::lock_guard lock(mu_);
  for (auto& [key, w] : waste_) w.slot = -1;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    Waste& w = waste_[GpuKey(snapshot.gpus[i])];
    w.slot = static_cast<int>(i);
    double now = snapshot.timestamp;
    if (w.seen && now > w.last_timestamp && IsIdleHeldNow(snapshot.samples[i])) {
      w.idle_held_seconds += std::min(now - w.last_timestamp, options_.max_gap_seconds);
    }
    w.seen = true;
    w.last_timestamp = now;
  }
  if (rerun) {
    latest_ = std::move(results);
    bottleneck_ = std::move(bottleneck);
    last_diagnosis_ = snapshot.timestamp;
  }
}

std::vector<prom::Family> DiagnosisMonitor::Families() const {
  std::lock_guard lock(mu_);
  std::vector<prom::Family> out = bottleneck_;
  prom::Family held = prom::MakeFamily(prom::kIdleHeld);
  prom::Family cost = prom::MakeFamily(prom::kWastedCost);
  // 0 on a GPU that works. The cost (only with a price, asked for) stays
  // dense: per-job cost rules list every job, at 0 when it wastes nothing.
  held.detail = prom::Detail::kSparse;
  for (const auto& [key, w] : waste_) {
    if (w.slot < 0) continue;  // GPU gone from the snapshot
    held.samples.push_back({w.slot, {}, w.idle_held_seconds});
    if (options_.gpu_hour_price) {
      cost.samples.push_back(
          {w.slot, {}, w.idle_held_seconds / kSecondsPerHour * *options_.gpu_hour_price});
    }
  }
  out.push_back(std::move(held));
  if (options_.gpu_hour_price) out.push_back(std::move(cost));
  return out;
}

std::shared_ptr<const std::vector<GpuDiagnosis>> DiagnosisMonitor::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

double DiagnosisMonitor::IdleHeldSeconds(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = waste_.find(key);
  return it == waste_.end() ? 0 : it->second.idle_held_seconds;
}

}  // namespace gpuscope::analysis
