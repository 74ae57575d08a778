// Node: the GPUs of this machine as one-shot CLI commands see them. Opens the
// NVML library the common options choose (driver or simulator), discovers the
// devices and takes fresh samples with every tier read, so a single query
// prints complete values. Commands that run a sampler thread (serve) use
// src/collect directly.
//
// Thread safety: one thread at a time (the CLI's main thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/common_options.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

class Node {
 public:
  // Loads the library and discovers the GPUs. Errors are one sentence (no
  // library, driver not loaded, bad scenario file with its line).
  static Result<std::unique_ptr<Node>> Open(const CommonOptions& options);

  virtual ~Node() = default;

  // A fresh snapshot of every GPU and MIG instance, every tier read.
  virtual Result<SnapshotPtr> Sample() = 0;

  // True on the simulator (--simulate, GPUSCOPE_SIM_SCENARIO, or a library
  // that exports gpuscopeSimLastError).
  virtual bool simulated() const = 0;
  // The scenario name when simulated ("" when unknown).
  virtual const std::string& scenario() const = 0;
};

// A GPU lost is a failure in every command: the sentence of each lost whole
// GPU among `slots` (positions in snapshot.gpus; empty: every GPU), as a
// GpuLost status (exit 15); Ok when none is lost.
Status LostGpus(const Snapshot& snapshot, const std::vector<std::size_t>& slots = {});

}  // namespace gpuscope::cli
