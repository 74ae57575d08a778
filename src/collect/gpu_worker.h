// Internal to src/collect: the per-device reader and the worker thread that
// runs it, so that a call hanging on one GPU never delays the others.
//
// DeviceReader owns what reading one device needs across cycles: its handle
// (re-acquired by UUID after the GPU was lost), learnt capabilities, GPM
// state. GpuWorker runs one read at a time on its own thread; the sampler
// posts a job, waits up to its watchdog deadline, and takes the Reading when
// it is there (possibly a cycle or more later, after a hang).
//
// Thread safety: DeviceReader is used by its worker thread only. GpuWorker's
// methods may be called from any thread; its destructor waits for a read in
// progress to return.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "collect/read_context.h"
#include "collect/readers.h"
#include "gpuscope/snapshot.h"
#include "nvml/device.h"
#include "nvml/library.h"

namespace gpuscope::collect {

class DeviceReader {
 public:
  // `device` is empty for a GPU that could not be opened: the first read
  // reports it lost and re-attach opens it by index.
  DeviceReader(const nvml::Library& library, const GpuInfo& info,
               std::optional<nvml::Device> device, Status open_error, ReadPlan plan);

  // Reads the tiers at time t; first re-acquires the handle when `reattach`.
  Reading Read(double t, Tiers tiers, bool reattach);

 private:
  Status Reattach();
  void StartGpm();

  const nvml::Library& library_;
  GpuInfo info_;
  std::optional<nvml::Device> device_;
  Status open_error_;
  ReadPlan plan_;
  Capabilities caps_;
  GpmState gpm_;
  bool described_ = false;  // Reattach described a GPU first seen lost
};

class GpuWorker {
 public:
  struct Job {
    double t = 0;
    Tiers tiers;
    bool reattach = false;
  };

  explicit GpuWorker(std::unique_ptr<DeviceReader> reader);
  ~GpuWorker();
  GpuWorker(const GpuWorker&) = delete;
  GpuWorker& operator=(const GpuWorker&) = delete;

  // Starts a read; false when one is still in progress.
  bool Post(const Job& job);
  // Waits until no read is in progress or the deadline passes; true if idle.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);
  bool busy() const;
  // The finished read not yet taken, if any.
  std::optional<Reading> Take();

 private:
  void Run();

  std::unique_ptr<DeviceReader> reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Job> job_;  // posted, or being read
  std::optional<Reading> result_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpuscope::collect
