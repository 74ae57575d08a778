// collect::Sampler: the background sampler (DESIGN principles 3, 4, 6).
//
// It opens NVML (retrying with exponential backoff, 1 s .. 60 s, while the
// library or driver is missing), takes the device inventory once, then runs
// cycles every fast interval. A cycle reads each device on its own worker
// thread for the cadence tiers due (fast every cycle; slow and PCIe on their
// own intervals; the first read of a device covers every tier and is the
// capability probe), waits for the workers up to a watchdog deadline, then
// builds a new immutable Snapshot (slow values carried forward between slow
// cycles; integrals and peaks updated, see integrals.h), appends to the
// trailing Window and publishes. Readers take Latest(); scrapes never call
// NVML.
//
// Partial failure: an unsupported metric is absent. A GPU answering
// GPU_IS_LOST is kLost with its values cleared; it is re-acquired by UUID on
// later cycles with backoff (lost_retry_min_s doubling to lost_retry_max_s)
// and re-attached when it answers. A GPU whose read has not returned by the
// deadline is kStale with its last values; it recovers when the call returns.
// Without NVML, snapshots still publish with nvml_up = false and nvml_error.
//
// Lateness: a loop cycle that, publish callbacks included, runs past the next
// tick skips the ticks it overran and is counted in Snapshot::overruns_total
// (gpuscope_collect_overruns_total), so "every cycle on time" is observable.
//
// Shutdown: Stop() ends a cycle's wait for a hung call at once; the
// destructor gives the per-GPU workers a bounded grace (GpuWorker::kStopGrace)
// and detaches any still inside an NVML call, so a wedged driver never blocks
// process exit (see gpu_worker.h).
//
// Thread safety: every public method may be called from any thread.
// SampleOnce and the background loop are serialized. Publish callbacks run
// on the thread that ran the cycle, after Latest() already returns the new
// snapshot; they must not call SampleOnce or Stop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collect/selection.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "gpuscope/window.h"
#include "nvml/library.h"

namespace gpuscope::collect {

struct Reading;
struct Tiers;

// Unix seconds now; injectable so that tests and stepped sampling (stepped.h)
// drive time.
using Clock = std::function<double()>;
double SystemClock();

// Opens the NVML library; the default opens SamplerOptions::nvml_path.
using LibraryOpener = std::function<Result<std::unique_ptr<nvml::Library>>()>;

struct SamplerOptions {
  std::string nvml_path = nvml::Library::kDefaultPath;
  double fast_interval_s = 1.0;    // utilization, power, clocks, memory, GPM; >= 0.1
  double slow_interval_s = 10.0;   // ECC, rows, pages, limits, NVLink links, processes
  double pcie_interval_s = 5.0;    // nvmlDeviceGetPcieThroughput (without GPM)
  double window_span_s = 600.0;    // trailing window and peaks
  double window_resolution_s = 0;  // 0: the fast interval
  double watchdog_s = 0;           // 0: max(2 x fast interval, 1 s)
  DeviceSelection devices;         // default: every GPU and MIG instance (f)
  bool read_processes = true;      // running processes with names (slow tier)
  double lost_retry_min_s = 1.0, lost_retry_max_s = 30.0;
  double nvml_retry_min_s = 1.0, nvml_retry_max_s = 60.0;
};

// kInvalidArgument naming the bad option (fast < 0.1 s, slow < fast, ...).
Status ValidateOptions(const SamplerOptions& options);

class Sampler {
 public:
  explicit Sampler(SamplerOptions options, Clock clock = SystemClock,
                   LibraryOpener opener = nullptr);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Opens NVML and takes the inventory now, returning why it failed (the
  // query CLI fails fast with it). The loop and SampleOnce open lazily.
  Status Open();
  // Starts / stops the background loop (a cycle every fast interval).
  void Start();
  void Stop();

  // Runs one full cycle synchronously and returns its snapshot. all_tiers:
  // read every tier now (the first read of a device always does).
  SnapshotPtr SampleOnce(bool all_tiers = false);

  // The latest published snapshot (an empty one, sequence 0, before any).
  SnapshotPtr Latest() const;
  // Called after each publish with the new snapshot.
  void OnPublish(std::function<void(const SnapshotPtr&)> callback);
  // Runs on each snapshot just before it is published (and frozen): serve
  // sets the host name and attribution there, so no reader copies a snapshot
  // to patch it. One decorator; a second call replaces it.
  void Decorate(std::function<void(Snapshot&)> decorator);

  // Trailing window; GPU positions are those of Snapshot::gpus.
  const Window& window() const { return window_; }
  // The open library (for the event thread), or null while NVML is down.
  std::shared_ptr<const nvml::Library> library() const;
  const SamplerOptions& options() const { return options_; }

 private:
  struct Slot;

  SnapshotPtr RunCycle(bool all_tiers, bool in_loop);
  bool EnsureLibrary(double now);
  Status OpenLocked();
  Tiers DueTiers(double now, bool all);
  void Dispatch(std::size_t position, const Tiers& tiers, double now);
  // `now`: when the cycle stopped waiting (the hang clock, with Slot::posted_at).
  void Collect(std::size_t position, std::chrono::steady_clock::time_point now);
  void Apply(std::size_t position, Reading&& reading);
  void MarkLost(Slot& slot, const Reading& reading);
  void WaitForWorkers(bool in_loop);
  void ShutdownWorkers();
  SnapshotPtr Publish(Snapshot&& snapshot);
  void Loop();

  SamplerOptions options_;
  Clock clock_;
  LibraryOpener opener_;
  Window window_;

  mutable std::mutex cycle_mu_;  // one cycle at a time; guards the state below
  std::shared_ptr<nvml::Library> library_;
  std::vector<std::unique_ptr<Slot>> slots_;  // workers co-own library_
  SystemInfo system_;
  std::string nvml_error_;
  double next_open_at_ = 0, open_backoff_ = 0;
  double next_slow_at_ = 0, next_pcie_at_ = 0;
  uint64_t sequence_ = 0, calls_total_ = 0, cycle_calls_ = 0;

  mutable std::mutex publish_mu_;  // latest_, callbacks_, decorator_, library copy for readers
  SnapshotPtr latest_;
  std::vector<std::function<void(const SnapshotPtr&)>> callbacks_;
  std::function<void(Snapshot&)> decorator_;
  std::shared_ptr<const nvml::Library> published_library_;

  std::mutex lifecycle_mu_;  // Start/Stop, one at a time; guards loop_
  std::thread loop_;
  std::mutex loop_mu_;  // the loop's wake-up
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};  // read by a cycle waiting on workers
  std::atomic<uint64_t> overruns_{0};        // the loop's late starts (Snapshot::overruns_total)
};

}  // namespace gpuscope::collect
