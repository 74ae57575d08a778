// What `gpuscope run` watches while the command runs: the GPUs sampled in
// this process on the sampler's background thread (no server), each cycle's
// GPU processes attributed to the command's tree or to others
// (attribution::ProcessTree), the diagnosis over the trailing window, and the
// job ledger fed with both, exactly as `gpuscope serve` feeds it. The
// command is one holder (workload "run"); every process outside its tree is
// a holder of its own, so a shared GPU's use is split by measured SM use and
// the others' part is never the command's.
//
// Thread safety: Open, Start and Stop from one thread; the readers (Usage,
// Facts, LiveLine) from any thread (one mutex with the sampler's hook).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "analysis/report.h"
#include "attribution/process_tree.h"
#include "collect/sampler.h"
#include "jobs/ledger.h"
#include "jobs/run_notes.h"

namespace gpuscope::cli {

struct WatchOptions {
  std::string nvml_path;
  double interval_s = 1;  // --interval: every read, processes included
  unsigned reaper = 0;    // gpuscope's pid: the root of the command's tree
  std::string proc_root = "/proc";
};

class RunWatch {
 public:
  explicit RunWatch(WatchOptions options);
  ~RunWatch();

  // Opens NVML and takes the first sample: an error when the library or
  // driver is missing (as every command), NotFound when it sees no GPU.
  Status Open();
  // Samples every interval on the background thread from now on; `start`
  // is when the command started (unix seconds).
  void Start(double start);
  void Stop();

  // The command's usage (the ledger's holder), nullopt while it held no GPU.
  std::optional<jobs::JobUsage> Usage() const;
  // What the run's notes read, as of now.
  jobs::RunFacts Facts(double end) const;
  // "GPU 0 97% 41.2/80.0 GiB 350 W | ... | compute_bound": the command's
  // GPUs (every GPU while it holds none) and the current finding.
  std::string LiveLine() const;

  static constexpr const char* kHolder = "run";

 private:
  void Decorate(Snapshot& snapshot);
  void Observe(const SnapshotPtr& snapshot);

  WatchOptions options_;
  collect::Sampler sampler_;
  jobs::Ledger ledger_;
  attribution::ProcessTree tree_;  // the decorator's (sampler thread)
  std::string hostname_;
  // The sampler thread's: the latest diagnosis and when it ran.
  std::vector<analysis::GpuDiagnosis> diagnosed_;
  double diagnosed_at_ = 0;

  mutable std::mutex mu_;  // guards the fields below
  double start_ = 0;
  bool started_ = false;
  std::optional<double> first_kernel_;
  std::set<jobs::SharingProcess> sharing_;
  std::set<std::string> held_;  // device keys the command held this cycle
  SnapshotPtr latest_;
  std::vector<analysis::GpuDiagnosis> diagnoses_;
};

}  // namespace gpuscope::cli
