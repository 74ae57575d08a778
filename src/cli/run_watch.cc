#include "cli/run_watch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "gpuscope/attribution.h"

namespace gpuscope::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// A GPU is busy from this utilization on (the ledger's and idle rule's 1%).
constexpr double kBusyPercent = 1;
constexpr double kDiagnoseEverySeconds = 1;

collect::SamplerOptions SamplerFor(const WatchOptions& o) {
  collect::SamplerOptions s;
  s.nvml_path = o.nvml_path;
  s.fast_interval_s = o.interval_s;
  // Processes are on the slow tier: read them every cycle, so a short
  // command's processes are seen.
  s.slow_interval_s = o.interval_s;
  return s;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The holder of a process outside the command's tree.
Holder Other(unsigned pid) { return Holder{.workload = "pid " + std::to_string(pid)}; }

// Whether the command ran GPU work on device i this cycle: its processes'
// measured SM share where NVML samples processes, else the device's
// utilization or SM activity (MIG has only the latter).
bool CommandBusy(const Snapshot& snapshot, std::size_t i) {
  const GpuSample& s = snapshot.samples[i];
  if (s.process_sm_measured && snapshot.attribution) {
    for (const ProcessInfo& p : s.processes) {
      const Holder* h = snapshot.attribution->OfProcess(p.pid);
      if (h && h->workload == RunWatch::kHolder && p.sm_share.value_or(0) > 0) return true;
    }
    return false;
  }
  return s.Find(Metric::kGpuUtil).value_or(0) >= kBusyPercent ||
         s.Find(Metric::kSmActive).value_or(0) >= kBusyPercent;
}

}  // namespace

RunWatch::RunWatch(WatchOptions options)
    : options_(std::move(options)),
      sampler_(SamplerFor(options_)),
      tree_(options_.reaper, options_.proc_root),
      hostname_(Hostname()) {
  sampler_.Decorate([this](Snapshot& snapshot) { Decorate(snapshot); });
  sampler_.OnPublish([this](const SnapshotPtr& snapshot) { Observe(snapshot); });
}

RunWatch::~RunWatch() { Stop(); }

Status RunWatch::Open() {
  GPUSCOPE_RETURN_IF_ERROR(sampler_.Open());
  SnapshotPtr first = sampler_.SampleOnce(/*all_tiers=*/true);
  if (!first->nvml_up) return Status::Unavailable(first->nvml_error);
  if (first->gpus.empty()) return Status::NotFound("gpuscope run: NVML sees no GPU on this host");
  return Status::Ok();
}

void RunWatch::Start(double start) {
  {
    std::lock_guard lock(mu_);
    start_ = start;
    started_ = true;
  }
  sampler_.Start();
}

void RunWatch::Stop() { sampler_.Stop(); }

// Runs on the sampler thread before the snapshot is published.
void RunWatch::Decorate(Snapshot& snapshot) {
  snapshot.system.hostname = hostname_;
  auto attribution = std::make_shared<Attribution>();
  const Holder run{.workload = kHolder};
  std::vector<std::pair<std::string, jobs::SharingProcess>> others;  // by device key
  std::set<std::string> held;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    const GpuInfo& gpu = snapshot.gpus[i];
    const std::string key = Attribution::DeviceKey(gpu);
    std::set<Holder> holders;
    for (const ProcessInfo& p : snapshot.samples[i].processes) {
      // A MIG instance's process counts on the instance's row, not its parent's.
      if (gpu.mig_enabled && !gpu.is_mig() && p.gpu_instance_id) continue;
      if (tree_.Contains(p.pid)) {
        holders.insert(run);
        attribution->processes[p.pid] = run;
        continue;
      }
      holders.insert(Other(p.pid));
      attribution->processes[p.pid] = Other(p.pid);
      others.push_back({key, {gpu.index, p.pid, p.name, ""}});
    }
    if (!holders.contains(run)) continue;  // only the command's GPUs are reported
    held.insert(key);
    attribution->holders[key].assign(holders.begin(), holders.end());
  }
  snapshot.attribution = std::move(attribution);
  // Only the processes on a device the command held share it.
  std::vector<jobs::SharingProcess> sharing;
  for (auto& [device, p] : others) {
    if (!held.contains(device)) continue;
    p.user = tree_.UserOf(p.pid);
    sharing.push_back(std::move(p));
  }
  std::lock_guard lock(mu_);
  if (!started_) return;
  sharing_.insert(sharing.begin(), sharing.end());
  held_ = std::move(held);
}

// Runs on the sampler thread after the snapshot is published.
void RunWatch::Observe(const SnapshotPtr& snapshot) {
  // The diagnosis reads the whole trailing window: at most once a second,
  // however short the interval (the ledger takes the latest between).
  if (snapshot->timestamp - diagnosed_at_ >= kDiagnoseEverySeconds) {
    diagnosed_ = analysis::RunDiagnose(*snapshot, sampler_.window(), analysis::RunOptions{});
    diagnosed_at_ = snapshot->timestamp;
  }
  std::lock_guard lock(mu_);
  if (!started_) return;
  ledger_.Observe(*snapshot, diagnosed_);
  if (!first_kernel_) {
    for (std::size_t i = 0; i < snapshot->gpus.size() && i < snapshot->samples.size(); ++i) {
      if (!held_.contains(Attribution::DeviceKey(snapshot->gpus[i]))) continue;
      if (CommandBusy(*snapshot, i)) {
        first_kernel_ = std::max(0.0, snapshot->timestamp - start_);
        break;
      }
    }
  }
  latest_ = snapshot;
  diagnoses_ = diagnosed_;
}

std::optional<jobs::JobUsage> RunWatch::Usage() const { return ledger_.Find("workload", kHolder); }

jobs::RunFacts RunWatch::Facts(double end) const {
  jobs::RunFacts f;
  std::lock_guard lock(mu_);
  f.wall_seconds = std::max(0.0, end - start_);
  f.first_kernel_seconds = first_kernel_;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) f.cuda_visible_devices = visible;
  SnapshotPtr snapshot = latest_ ? latest_ : sampler_.Latest();
  f.gpus = snapshot->gpus;
  f.sharing.assign(sharing_.begin(), sharing_.end());
  return f;
}

std::string RunWatch::LiveLine() const {
  std::lock_guard lock(mu_);
  if (!latest_) return "gpuscope run: sampling...";
  std::string out;
  const bool any_held = !held_.empty();
  for (std::size_t i = 0; i < latest_->gpus.size() && i < latest_->samples.size(); ++i) {
    const GpuInfo& gpu = latest_->gpus[i];
    if (any_held && !held_.contains(Attribution::DeviceKey(gpu))) continue;
    const GpuSample& s = latest_->samples[i];
    std::optional<double> util = s.Find(Metric::kGpuUtil);
    std::optional<double> used = s.Find(Metric::kMemoryUsed), total = s.Find(Metric::kMemoryTotal);
    std::optional<double> power = s.Find(Metric::kPowerUsage);
    if (!out.empty()) out += " | ";
    out += analysis::GpuLabel(gpu) + " " + (util ? fmt::format("{:.0f}%", *util) : "-") + " " +
           (used && total ? fmt::format("{:.1f}/{:.0f} GiB", *used / kGiB, *total / kGiB) : "-") +
           " " + (power ? fmt::format("{:.0f} W", *power) : "-");
  }
  std::string finding;
  for (const analysis::GpuDiagnosis& d : diagnoses_) {
    if (any_held && !held_.contains(Attribution::DeviceKey(d.info))) continue;
    if (!d.findings.empty()) {
      finding = std::string(analysis::KindName(d.findings.front().kind));
      break;
    }
  }
  return out + (finding.empty() ? "" : " | " + finding);
}

}  // namespace gpuscope::cli
