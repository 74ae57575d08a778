// What each holder of a GPU used since the agent first saw it: the job
// ledger behind `gpuscope report` and /api/v1/jobs (docs/reports.md).
//
// A holder is a Slurm job ("job", its id), a Kubernetes pod ("pod",
// "<namespace>/<pod>") or a workload ("workload", its name); one device
// holder (gpuscope/attribution.h) feeds each of the three it names. Per
// holder and device (a GPU, or a MIG instance on its own) the ledger keeps:
// seconds held, busy, SM-active and tensor-active seconds, energy, idle-held
// and throttled seconds (with the throttled seconds per reason), peak memory,
// and the diagnosis findings with when they were first and last seen.
//
// Exact between cycles, like gpuscope_gpu_idle_held_seconds_total: an
// interval (previous cycle, this cycle] counts for a holder that held the
// device at both ends, so a holder's held seconds on a device are exactly
// last seen - first seen (gaps over max_gap_seconds count only that much).
// Busy, SM-active and energy are the deltas of the sampler's integrals over
// the interval; idle-held, throttled and tensor activity are judged at the
// interval's end, as the idle-held counter is. A device with N distinct
// holders gives each 1/N of every quantity (the tenant rules' split,
// deploy/prometheus/rules/gpu-tenants.yml); peak memory is the device's.
//
// A holder that no device names any more has ended (end = last seen); ended
// holders are kept for keep_ended_seconds and at most max_ended of them (the
// oldest go first). A holder that comes back is running again.
//
// Thread safety: Observe from one thread (the sampler's publish hook); List
// and Find from any thread (one mutex; Observe holds it for O(devices x
// holders + running holders) work, however many ended ones are kept; readers
// copy what they return).
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "gpuscope/attribution.h"
#include "gpuscope/catalog.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::jobs {

struct LedgerOptions {
  double keep_ended_seconds = 24 * 3600;  // --jobs-keep-ended, default 24 h
  std::size_t max_ended = 1000;           // --jobs-max-ended, default 1,000
  double max_gap_seconds = 60;            // longer gaps between cycles count only this much
};

// One finding of the diagnosis on one of the holder's devices.
struct FindingSeen {
  std::string kind;        // analysis::KindName
  std::string device_key;  // Attribution::DeviceKey
  double first = 0, last = 0;
};

// A holder's use of one device (shares already applied).
struct DeviceUsage {
  std::string device_key;  // "GPU-..." or "GPU-.../<gpu instance>"
  std::string uuid;        // the GPU's (the parent's for MIG)
  unsigned gpu = 0;        // NVML index
  std::string hostname;
  std::string mig_profile;  // "" for a whole GPU
  double held_seconds = 0, busy_seconds = 0, sm_active_seconds = 0, tensor_active_seconds = 0;
  double energy_joules = 0, idle_held_seconds = 0, throttled_seconds = 0;
  std::map<std::string, double> throttle_reason_seconds;  // by reason label
  bool sm_active_known = false, tensor_known = false, energy_known = false;
  double memory_peak_bytes = 0, memory_total_bytes = 0;
  double first_seen = 0, last_seen = 0;
};

struct JobUsage {
  std::string kind;                               // "job", "pod" or "workload"
  std::string id;                                 // "4242", "ns/pod", "trainer"
  std::string namespace_name, workload, hpc_job;  // as the holder named them
  double start = 0;                               // first seen, unix seconds
  std::optional<double> end;                      // last seen once ended
  std::vector<DeviceUsage> devices;               // by device key
  std::vector<FindingSeen> findings;              // by (kind, device key)
};

class Ledger {
 public:
  explicit Ledger(LedgerOptions options = {});

  // One published cycle: its snapshot (with attribution) and diagnoses.
  void Observe(const Snapshot& snapshot, const std::vector<analysis::GpuDiagnosis>& diagnoses);

  // Every holder kept, running first, then by start; `kind` filters when not empty.
  std::vector<JobUsage> List(const std::string& kind = "") const;
  // One holder; nullopt when the ledger has none of that name.
  std::optional<JobUsage> Find(const std::string& kind, const std::string& id) const;
  std::size_t ended_count() const;

 private:
  // A device's integrals at the previous cycle.
  struct Counters {
    double timestamp = 0;
    std::optional<double> busy, sm_active, energy_mj;
    std::array<std::optional<double>, kClockReasonTable.size()> throttle;
  };
  // One device's quantities over (previous cycle, this cycle]; dt 0 when the
  // device was not in the previous cycle.
  struct Interval {
    double dt = 0, since = 0;
    std::optional<double> busy, sm_active, tensor_active, energy_joules;
    double idle_held = 0, throttled = 0;
    std::array<double, kClockReasonTable.size()> reasons{};
    double memory_used = 0, memory_total = 0;
  };
  struct Entry {
    JobUsage usage;                    // devices and findings left empty: the maps below
    std::vector<DeviceUsage> devices;  // a few: searched by device_key
    std::map<std::pair<std::string, std::string>, FindingSeen> findings;
    double last_seen = 0;
    bool ended = false;
  };

  void ObserveDevice(const Snapshot& snapshot, std::size_t slot, double now);
  void Credit(const std::pair<std::string, std::string>& key, const Holder& holder, double share,
              const Snapshot& snapshot, std::size_t slot, const Interval& interval);
  void NoteFindings(const Snapshot& snapshot, const std::vector<analysis::GpuDiagnosis>& diagnoses,
                    double now);
  void EndAndEvict(double now);
  static JobUsage Assemble(const Entry& e);

  LedgerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Counters> previous_;                      // by device key
  std::map<std::pair<std::string, std::string>, Entry> entries_;  // by (kind, id)
  std::set<std::pair<std::string, std::string>> running_;         // the holders not ended
  std::deque<std::pair<double, std::pair<std::string, std::string>>> ended_order_;
  std::size_t ended_ = 0;
};

}  // namespace gpuscope::jobs
