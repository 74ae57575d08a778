#include "analysis/monitor.h"

#include <algorithm>

namespace gpuscope::analysis {
namespace {

// Matches the diagnosis: under 5% is idle, 256 MiB held is more than a bare
// CUDA context.
constexpr double kIdlePercent = 5;
constexpr double kHeldMinBytes = 256.0 * 1024 * 1024;
constexpr double kSecondsPerHour = 3600;

prom::Family Gauge(std::string name, std::string help) {
  prom::Family f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = prom::FamilyType::kGauge;
  f.base = prom::LabelBase::kNative;
  return f;
}

}  // namespace

std::string GpuKey(const GpuInfo& info) {
  return info.mig_uuid.empty() ? info.uuid : info.uuid + "/" + info.mig_uuid;
}

std::vector<prom::Family> BottleneckFamilies(const std::vector<GpuDiagnosis>& results) {
  prom::Family found = Gauge("gpuscope_bottleneck",
                             "1 when the diagnosis over the trailing window finds this kind of "
                             "bottleneck or state on the GPU (see gpuscope diagnose).");
  prom::Family conf = Gauge("gpuscope_bottleneck_confidence",
                            "Confidence in [0, 1] of the finding of this kind; 0 when absent.");
  prom::Family eta = Gauge("gpuscope_memory_oom_eta_seconds",
                           "Predicted seconds until the framebuffer is full, from the least-"
                           "squares memory trend; present only while a trend predicts it.");
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
  if (sample.state != GpuState::kOk || !sample.Has(Metric::kGpuUtil)) return false;
  if (sample.Get(Metric::kGpuUtil) >= kIdlePercent) return false;
  if (sample.Has(Metric::kSmActive) && sample.Get(Metric::kSmActive) >= kIdlePercent) return false;
  double held = 0;
  bool sized = false;
  for (const ProcessInfo& p : sample.processes) {
    if (p.used_memory_bytes) sized = true, held += static_cast<double>(*p.used_memory_bytes);
  }
  if (!sized && !sample.processes.empty() && sample.Has(Metric::kMemoryUsed)) {
    held = sample.Get(Metric::kMemoryUsed);  // per-process sizes hidden
  }
  return held >= kHeldMinBytes;
}

DiagnosisMonitor::DiagnosisMonitor(MonitorOptions options) : options_(std::move(options)) {}

void DiagnosisMonitor::Update(const Snapshot& snapshot, const Window& window) {
  bool rerun = !last_diagnosis_ ||
               snapshot.timestamp - *last_diagnosis_ >= options_.diagnose_interval_seconds ||
               snapshot.timestamp < *last_diagnosis_;
  std::vector<GpuDiagnosis> results;
  if (rerun) results = RunDiagnose(snapshot, window, {options_.diagnose, {}});
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
    last_diagnosis_ = snapshot.timestamp;
  }
}

std::vector<prom::Family> DiagnosisMonitor::Families() const {
  std::lock_guard lock(mu_);
  std::vector<prom::Family> out = BottleneckFamilies(latest_);
  prom::Family held;
  held.name = "gpuscope_gpu_idle_held_seconds_total";
  held.help = "Seconds the GPU was idle while processes held its memory (waste).";
  held.type = prom::FamilyType::kCounter;
  prom::Family cost = held;
  cost.name = "gpuscope_wasted_cost_total";
  cost.help = "Cost of idle-held time: idle-held hours x the configured GPU-hour price.";
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

std::vector<GpuDiagnosis> DiagnosisMonitor::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

double DiagnosisMonitor::IdleHeldSeconds(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = waste_.find(key);
  return it == waste_.end() ? 0 : it->second.idle_held_seconds;
}

}  // namespace gpuscope::analysis
