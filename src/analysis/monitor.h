// The diagnosis as Prometheus families for `gpuscope serve`: per GPU and kind
// gpuscope_bottleneck (0/1) and gpuscope_bottleneck_confidence (every kind
// always present, so series never appear or vanish), the predicted
// gpuscope_memory_oom_eta_seconds (only while a trend predicts one), and the
// waste counters gpuscope_gpu_idle_held_seconds_total and, with a GPU-hour
// price, gpuscope_wasted_cost_total.
//
// The waste counters integrate the time between snapshots during which the
// GPU was idle (utilization, and SM activity where present, under 5%) while
// at least 256 MiB of its memory was held (HeldBytes: as the idle rules count
// it, the device's used memory where processes are hidden): the exact share
// of idle-held time, whatever the scrape interval. Counters are keyed by GPU UUID (and MIG
// UUID), so they survive GPUs being reordered.
//
// Thread safety: Update (one thread, typically the sampler's) and Families
// (any thread) may run concurrently; they share state under a mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis {

struct MonitorOptions {
  DiagnoseOptions diagnose;               // window default 5 min
  double diagnose_interval_seconds = 10;  // re-run the diagnosis at most this often
  std::optional<double> gpu_hour_price;   // --gpu-hour-price; unset: no cost counter
  double max_gap_seconds = 60;            // longer gaps between snapshots count only this much
};

// Families for a set of diagnoses (pure): bottleneck, confidence, OOM ETA.
std::vector<prom::Family> BottleneckFamilies(const std::vector<GpuDiagnosis>& results);

// True when the sample shows an idle GPU whose memory processes hold.
bool IsIdleHeldNow(const GpuSample& sample);

class DiagnosisMonitor {
 public:
  explicit DiagnosisMonitor(MonitorOptions options);

  // Once per published snapshot: integrates the waste counters over the time
  // since the previous snapshot and, every diagnose_interval_seconds, re-runs
  // the diagnosis over the window.
  void Update(const Snapshot& snapshot, const Window& window);

  // The families to pass to the Renderer as extras.
  std::vector<prom::Family> Families() const;
  // The latest diagnoses (empty before the first Update), shared: readers
  // take them every cycle, they change every diagnose_interval_seconds.
  std::shared_ptr<const std::vector<GpuDiagnosis>> Latest() const;
  // Idle-held seconds counted for a GPU key (uuid, or "uuid/mig_uuid").
  double IdleHeldSeconds(const std::string& key) const;

 private:
  struct Waste {
    double idle_held_seconds = 0;
    double last_timestamp = 0;
    bool seen = false;
    int slot = -1;
  };

  MonitorOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Waste> waste_;  // by GPU key
  std::shared_ptr<const std::vector<GpuDiagnosis>> latest_ =
      std::make_shared<const std::vector<GpuDiagnosis>>();
  std::vector<prom::Family> bottleneck_;  // BottleneckFamilies(*latest_), built with it
  std::optional<double> last_diagnosis_;
};

// The key the waste counters use for a GPU.
std::string GpuKey(const GpuInfo& info);

}  // namespace gpuscope::analysis
