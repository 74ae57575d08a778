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
// interval's end, as the idle-held counter is. A device with several holders
// gives each its weight of every quantity (gpuscope/holder_share.h): its part
// of the processes' measured SM use, plus an even part of the use no holder's
// processes made, where NVML measured per-process samples and some holder's
// process ran; else 1/N (MIG, samples unsupported, all idle), as the tenant
// rules split it
// (deploy/prometheus/rules/gpu-tenants.yml); peak memory is the device's. Each
// device row says which split it had (DeviceUsage::split).
//
// A holder that no device names any more has ended (end = last seen); ended
// holders are kept for keep_ended_seconds, at most max_ended of them, and only
// while the whole ledger (running and ended, bookkeeping included, an upper
// estimate: bytes()) fits max_bytes; past any of the three the ended holder
// that ended first goes first. A holder that comes back is running again and
// keeps one record, however often it ends and returns. A holder evicted is
// unknown: Find answers nullopt, and `gpuscope report` says the job is not
// known (docs/reports.md). Running holders are never evicted (they are
// bounded by the devices and their holders).
//
// Thread safety: Observe from one thread (the sampler's publish hook); List,
// Find and the counts from any thread (one mutex; Observe holds it for
// O(devices x holders + running holders x their devices) work, however many
// ended ones are kept; readers copy what they return).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "gpuscope/attribution.h"
#include "gpuscope/catalog.h"
#include "gpuscope/holder_share.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::jobs {

struct LedgerOptions {
  double keep_ended_seconds = 24 * 3600;  // --jobs-keep-ended, default 24 h
  std::size_t max_ended = 1000;           // --jobs-max-ended, default 1,000
  // The ledger's bytes (bytes()) at most, evicting ended holders: --jobs-max-bytes, default
  // 16 MiB (1,000 ended 2-GPU jobs take about 2.7 MB).
  std::size_t max_bytes = std::size_t{16} << 20;
  double max_gap_seconds = 60;  // longer gaps between cycles count only this much
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
  // How the device's quantities were split for this holder: "sole holder",
  // "measured", "even split" (SplitMethodName), or "mixed" when the device's
  // intervals had more than one of the last two; "" when nothing counted yet.
  std::string split;
  // The device's seconds split each way (not weighted): they decide `split`.
  double measured_split_seconds = 0, even_split_seconds = 0;
};

// DeviceUsage::split from its measured and even-split seconds.
std::string SplitName(const DeviceUsage& d);

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
  // Holders kept, running and ended.
  std::size_t size() const;
  // An upper estimate of the bytes the ledger holds (records, their strings,
  // devices and findings, and the indexes), as of the last Observe.
  std::size_t bytes() const;

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
    std::size_t bytes = 0;  // EntryBytes when it ended
  };
  using Key = std::pair<std::string, std::string>;

  void ObserveDevice(const Snapshot& snapshot, std::size_t slot, double now);
  void Credit(const std::pair<std::string, std::string>& key, const Holder& holder, double share,
              SplitMethod method, const Snapshot& snapshot, std::size_t slot,
              const Interval& interval);
  void NoteFindings(const Snapshot& snapshot, const std::vector<analysis::GpuDiagnosis>& diagnoses,
                    double now);
  void EndAndEvict(double now);
  void Evict(double now);
  static std::size_t EntryBytes(const Key& key, const Entry& e);
  static JobUsage Assemble(const Entry& e);

  LedgerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Counters> previous_;  // by device key
  std::map<Key, Entry> entries_;              // by (kind, id)
  std::set<Key> running_;                     // the holders not ended
  std::set<std::pair<double, Key>> ended_;    // the ended ones by end: one each, oldest first
  std::size_t running_bytes_ = 0, ended_bytes_ = 0;
};

}  // namespace gpuscope::jobs
