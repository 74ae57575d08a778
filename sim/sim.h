// The running simulator: one scenario, its GPUs' cached physics state, the
// fault lists (scenario faults plus faults injected at run time), scenario
// time, and the global instance that nvmlInit creates and nvmlShutdown ends.
//
// Thread safety: every public method is safe from any thread. Each GPU has
// its own mutex, so a slow or hung call on one GPU never blocks another; no
// lock is held while a hang sleeps. Events fire with a GPU lock held (lock
// order: GPU, then the event registry).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "calls.h"
#include "physics.h"
#include "scenario.h"

namespace gpuscope::sim {

struct Identity {
  std::string uuid, serial, bus_id, bus_id_legacy;
  unsigned domain = 0, bus = 0;
  unsigned minor = 0;  // /dev/nvidia<minor>
};

struct TimeOptions {
  double time_scale = 1.0;
  double start_offset = 0;
  std::optional<double> frozen;
};

class Sim {
 public:
  Sim(Scenario scenario, TimeOptions time);

  const Scenario& scenario() const { return scenario_; }
  unsigned gpu_count() const { return static_cast<unsigned>(gpus_.size()); }
  const GpuSpec& spec(unsigned g) const { return gpus_[g]->spec; }
  const Identity& identity(unsigned g) const { return gpus_[g]->id; }

  double Now() const;
  // Wall-clock microseconds since the epoch at construction (timestamps).
  unsigned long long epoch_us() const { return epoch_us_; }
  void Freeze(double t);

  // Advances GPU g to scenario time t (firing crossed fault events) and
  // returns a copy of its state.
  GpuState StateAt(unsigned g, double t);
  // Advances every GPU to now; returns the wall seconds until the next fault
  // onset still to come (infinity when none, or while time is frozen).
  double AdvanceAll();

  bool Lost(unsigned g, double t);
  double HangSeconds(unsigned g, Fn fn, double t);
  // The error code an active `fail` fault gives `fn` on GPU g; 0 when none.
  int FailCode(unsigned g, Fn fn, double t);
  unsigned RecoveryAction(unsigned g, double t);
  // A copy of GPU g's faults, scenario and injected, active or not (sim/fabric.cc).
  std::vector<FaultSpec> Faults(unsigned g);
  unsigned long long SupportedEvents(unsigned g) const;

  // Starts f on GPU g now (f.at and f.until are overwritten).
  void Inject(unsigned g, FaultSpec f);
  // Ends g's active faults of that kind (all kinds when empty) now.
  void Clear(unsigned g, std::optional<FaultKind> kind);

  // A live process of this host shown as a GPU process of g from now on
  // (control `attach`, sim/attach.cc): p.start is overwritten, p.end is
  // forever until Detach. Its memory and SM share count like a scenario's.
  void Attach(unsigned g, ProcessSpec p);
  // Ends every attachment of pid now (it exited, or control `detach`).
  void Detach(unsigned pid);
  // The pids attached and not yet detached, on any GPU.
  std::vector<unsigned> AttachedPids() const;
  // GPU g's processes: the scenario's, then the attached ones (a copy).
  std::vector<ProcessSpec> Processes(unsigned g) const;

 private:
  struct Gpu {
    GpuSpec spec;
    Identity id;
    mutable std::mutex mu;
    std::vector<FaultSpec> faults;      // guarded by mu
    std::vector<bool> announced;        // events already fired, per fault
    std::vector<ProcessSpec> attached;  // guarded by mu; Attach order
    GpuState cache;                     // guarded by mu
    // xid-storm events fired, per fault (storm.h); guarded by mu
    std::vector<uint64_t> storm_fired;
  };
  template <typename F>
  auto WithFaults(unsigned g, F&& f);
  void AdvanceLocked(unsigned g, Gpu& gpu, int64_t target);
  void Announce(unsigned g, Gpu& gpu, const std::vector<size_t>& onsets);

  Scenario scenario_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  TimeOptions time_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<double> frozen_;  // NaN: running
  unsigned long long epoch_us_ = 0;
  unsigned driver_major_ = 0;
};

// Deterministic identity of GPU `index` from the seed (overrides applied).
Identity MakeIdentity(const GpuSpec& spec, uint64_t seed, unsigned index);

// "MIG-<uuid>" of GPU instance gi_id on the GPU with UUID parent_uuid.
std::string MigUuid(const std::string& parent_uuid, unsigned gi_id);

// The initialised simulator, or null.
std::shared_ptr<Sim> CurrentSim();

}  // namespace gpuscope::sim
