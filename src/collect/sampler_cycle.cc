// One sampler cycle: dispatch reads to the workers, wait up to the watchdog
// deadline, merge what came back, publish.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/log.h"
#include "collect/read_context.h"
#include "collect/sampler.h"
#include "collect/sampler_slot.h"
#include "collect/vgpu_window.h"

namespace gpuscope::collect {
namespace {

// Rounded up, so a wait that times out has lasted at least `s`.
std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::ceil<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

bool Derived(Tier tier) { return tier == Tier::kDerived || tier == Tier::kEvent; }

// Fresh values replace old ones; a metric of a tier that was read but did
// not answer goes absent; tiers not read keep their values.
void Merge(GpuSample& sample, Reading& reading) {
  for (const MetricDef& def : kCatalog) {
    if (Derived(def.tier)) continue;
    if (reading.sample.Has(def.id)) {
      sample.Set(def.id, reading.sample.Get(def.id));
    } else if (reading.tiers.Has(def.tier)) {
      sample.Clear(def.id);
    }
  }
  if (reading.tiers.slow) {
    sample.nvlink = std::move(reading.sample.nvlink);
    sample.processes = std::move(reading.sample.processes);
    sample.process_sm_measured = reading.sample.process_sm_measured;
    sample.fabric_cluster_uuid = std::move(reading.sample.fabric_cluster_uuid);
    sample.vgpus = std::move(reading.sample.vgpus);
    sample.vgpu_scheduler_policy = reading.sample.vgpu_scheduler_policy;
  }
}

WindowPoint ToPoint(double t, const GpuSample& sample) {
  WindowPoint point;
  point.t = t;
  point.present = sample.present;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    point.values[i] = static_cast<float>(sample.values[i]);
  }
  return point;
}

std::string StaleReason(double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "an NVML call has not returned for %.1f s", seconds);
  return text;
}

}  // namespace

Tiers Sampler::DueTiers(double now, bool all) {
  // Half a fast interval of slack, so that jitter does not skip a tier.
  const double slack = options_.fast_interval_s / 2;
  Tiers tiers;
  tiers.slow = all || now + slack >= next_slow_at_;
  tiers.pcie = all || now + slack >= next_pcie_at_;
  if (tiers.slow) next_slow_at_ = now + options_.slow_interval_s;
  if (tiers.pcie) next_pcie_at_ = now + options_.pcie_interval_s;
  return tiers;
}

SnapshotPtr Sampler::RunCycle(bool all_tiers, bool in_loop) {
  std::lock_guard lock(cycle_mu_);
  const auto started = std::chrono::steady_clock::now();
  const double now = clock_();
  Snapshot snapshot;
  snapshot.sequence = ++sequence_;
  cycle_calls_ = 0;
  if (EnsureLibrary(now)) {
    const Tiers tiers = DueTiers(now, all_tiers);
    for (std::size_t i = 0; i < slots_.size(); ++i) Dispatch(i, tiers, now);
    WaitForWorkers(in_loop);
    const auto collected_at = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < slots_.size(); ++i) Collect(i, collected_at);
    snapshot.nvml_up = true;
    snapshot.slow_cycle = tiers.slow;
    snapshot.system = system_;
    for (const auto& slot : slots_) {
      snapshot.gpus.push_back(slot->info);
      snapshot.samples.push_back(slot->sample);
    }
  } else {
    snapshot.nvml_error = nvml_error_;
  }
  calls_total_ += cycle_calls_;
  snapshot.nvml_calls = cycle_calls_;
  snapshot.nvml_calls_total = calls_total_;
  snapshot.timestamp = clock_();
  snapshot.overruns_total = overruns_.load(std::memory_order_relaxed);
  snapshot.collect_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return Publish(std::move(snapshot));
}

void Sampler::WaitForWorkers(bool in_loop) {
  // The loop waits at most one fast interval, so a hung GPU never delays
  // the next cycle; SampleOnce waits up to the watchdog for every answer.
  const double wait_s =
      in_loop ? std::min(options_.watchdog_s, options_.fast_interval_s) : options_.watchdog_s;
  // Each wait counts from the slot's own posted_at, the reference Collect
  // measures a hang from: a wait that times out has then seen the call busy
  // for at least wait_s, so a full-watchdog wait always ends stale. The loop
  // waits in slices so that Stop() does not wait out a hung call.
  const auto slice = std::chrono::milliseconds(50);
  for (auto& slot : slots_) {
    if (!slot->posted) continue;
    const auto deadline = slot->posted_at + Seconds(wait_s);
    while (!slot->worker->WaitIdle(
        in_loop ? std::min(deadline, std::chrono::steady_clock::now() + slice) : deadline)) {
      if (std::chrono::steady_clock::now() >= deadline || stop_requested_) break;
    }
  }
}

void Sampler::Dispatch(std::size_t position, const Tiers& tiers, double now) {
  Slot& slot = *slots_[position];
  slot.posted = false;
  if (slot.worker->busy()) return;  // still in a call from an earlier cycle
  if (auto late = slot.worker->Take()) Apply(position, std::move(*late));
  GpuWorker::Job job{now, slot.probed ? tiers : Tiers::All(), false};
  if (slot.lost) {
    if (now < slot.retry_at) return;
    job.tiers = Tiers::All();
    job.reattach = true;
  }
  // Stamped before posting, so the call cannot have started earlier.
  const auto posted_at = std::chrono::steady_clock::now();
  slot.posted = slot.worker->Post(job);
  if (slot.posted) slot.posted_at = posted_at;
}

void Sampler::Collect(std::size_t position, std::chrono::steady_clock::time_point now) {
  Slot& slot = *slots_[position];
  if (slot.worker->busy()) {
    const double busy_s = std::chrono::duration<double>(now - slot.posted_at).count();
    // Not past the watchdog yet: the previous values and state stand.
    if (slot.lost || busy_s < options_.watchdog_s) return;
    if (slot.sample.state != GpuState::kStale) {
      log::Warn("GPU {} ({}): NVML call hung; serving its last values", slot.info.index,
                slot.info.uuid);
    }
    slot.sample.state = GpuState::kStale;
    slot.sample.state_reason = StaleReason(busy_s);
    return;
  }
  if (auto reading = slot.worker->Take()) Apply(position, std::move(*reading));
}

void Sampler::Apply(std::size_t position, Reading&& reading) {
  Slot& slot = *slots_[position];
  cycle_calls_ += reading.calls;
  for (const auto& key : reading.call_errors) ++slot.sample.call_errors[key];
  if (reading.lost) {
    MarkLost(slot, reading);
    return;
  }
  if (slot.lost || slot.sample.state == GpuState::kStale) {
    log::Info("GPU {} ({}) answers again", slot.info.index, slot.info.uuid);
  }
  slot.lost = false;
  slot.retry_backoff = 0;
  if (reading.described) slot.info = *reading.described;
  Merge(slot.sample, reading);
  slot.integrator.Update(reading.t, reading.sample, reading.energy_counter, slot.sample);
  slot.probed = true;
  const bool failed = reading.failed();
  slot.sample.state = failed ? GpuState::kError : GpuState::kOk;
  slot.sample.state_reason = failed ? reading.error : "";
  slot.sample.sampled_at = reading.t;
  if (reading.tiers.fast && !failed) window_.Append(position, ToPoint(reading.t, slot.sample));
  // Each vGPU instance's window, at the cadence its utilization is read.
  if (reading.tiers.slow && !failed) {
    window_.AppendInstances(position, VgpuPoints(reading.t, slot.sample));
  }
}

void Sampler::MarkLost(Slot& slot, const Reading& reading) {
  if (!slot.lost) {
    log::Warn("GPU {} ({}) is lost: {}", slot.info.index, slot.info.uuid, reading.error);
    slot.retry_backoff = options_.lost_retry_min_s;
  } else {
    slot.retry_backoff = std::min(slot.retry_backoff * 2, options_.lost_retry_max_s);
  }
  slot.lost = true;
  slot.retry_at = reading.t + slot.retry_backoff;
  slot.sample.present.reset();
  slot.sample.nvlink.clear();
  slot.sample.processes.clear();
  slot.sample.vgpus.clear();
  slot.sample.state = GpuState::kLost;
  slot.sample.state_reason = reading.error;
  slot.integrator.Break();
}

}  // namespace gpuscope::collect
