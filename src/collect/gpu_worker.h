// Internal to src/collect: the per-device reader and the worker thread that
// runs it, so that a call hanging on one GPU never delays the others.
//
// DeviceReader owns what reading one device needs across cycles: its handle
// (re-acquired by UUID after the GPU was lost), learnt capabilities, GPM
// state. GpuWorker runs one read at a time on its own thread; the sampler
// posts a job, waits up to its watchdog deadline, and takes the Reading when
// it is there (possibly a cycle or more later, after a hang).
//
// Shutdown never waits on a hung driver call (DESIGN: SIGTERM exits within a
// second). The worker's state lives in a shared_ptr that its thread co-owns,
// and the DeviceReader co-owns the nvml::Library. Shutdown() waits a bounded
// time for the thread; a thread still inside an NVML call is then detached:
// nothing it touches can dangle, and the Library (so nvmlShutdown) is only
// destroyed by the last owner, after the call has returned. If the process
// exits first, nvmlShutdown never runs and the OS cleans up.
//
// Thread safety: DeviceReader is used by its worker thread only. GpuWorker's
// methods may be called from any thread; its destructor waits at most
// kStopGrace for a read in progress to return.
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
  DeviceReader(std::shared_ptr<const nvml::Library> library, const GpuInfo& info,
               std::optional<nvml::Device> device, Status open_error, ReadPlan plan);

  // Reads the tiers at time t; first re-acquires the handle when `reattach`.
  Reading Read(double t, Tiers tiers, bool reattach);

 private:
  Status Reattach();
  void StartGpm();

  // First member: the devices and GPM samplers below borrow it.
  std::shared_ptr<const nvml::Library> library_;
  GpuInfo info_;
  std::optional<nvml::Device> device_;
  Status open_error_;
  ReadPlan plan_;
  Capabilities caps_;
  GpmState gpm_;
  ProcessState processes_;
  VgpuState vgpus_;
  bool described_ = false;  // Reattach described a GPU first seen lost
};

class GpuWorker {
 public:
  struct Job {
    double t = 0;
    Tiers tiers;
    bool reattach = false;
  };

  // How long the destructor waits for a read in progress before detaching.
  static constexpr std::chrono::milliseconds kStopGrace{500};

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

  // Asks the thread to end after the read in progress (does not wait).
  void RequestStop();
  // RequestStop, then waits for the thread until `deadline`: true if it
  // ended (joined); false if it is still in a call and was detached.
  // Idempotent; later calls return the first outcome.
  bool Shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  // Shared by the owner and the thread, so a detached thread keeps it alive.
  struct State {
    explicit State(std::unique_ptr<DeviceReader> r) : reader(std::move(r)) {}
    std::unique_ptr<DeviceReader> reader;
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Job> job;  // posted, or being read
    std::optional<Reading> result;
    bool stop = false;
    bool exited = false;  // Run has returned
  };

  static void Run(State& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
  bool joined_ = false;  // Shutdown's outcome, once thread_ is released
};

}  // namespace gpuscope::collect
