// Whose work each GPU or MIG instance serves: the immutable map that the
// attribution sources publish (like a Snapshot) and that renderers, the
// diagnosis, baselines and the CLI read.
//
// A device may have several holders (a time-sliced or MPS-shared GPU, or one
// job per line of an HPC mapping file); each holder becomes its own series, so
// series stay unique and every pod is visible (see docs/attribution.md).
// Contract: built by attribution::Service, then published as a
// shared_ptr<const Attribution>; nobody mutates it afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/snapshot.h"

namespace gpuscope {

// One holder of a device. Empty fields are unknown.
struct Holder {
  std::string namespace_name, pod, container;  // Kubernetes
  std::string hpc_job;                         // Slurm job id
  std::string workload;                        // see attribution/workload.h

  auto operator<=>(const Holder&) const = default;

  // As people read it: "inf/web-x2kq9 (container srv, workload web)",
  // "Slurm job 4242", or both joined by ", ".
  std::string Describe() const {
    std::string out;
    if (!pod.empty()) {
      out =
          namespace_name + "/" + pod + " (container " + container + ", workload " + workload + ")";
    }
    if (!hpc_job.empty()) out += (out.empty() ? "Slurm job " : ", Slurm job ") + hpc_job;
    if (out.empty() && !workload.empty()) out = "workload " + workload;
    return out;
  }
};

// One GPU process and whose work it is, for the commands' reports.
struct ProcessHolding {
  unsigned pid = 0;
  std::string name;  // as NVML gave it (the commands are local, like nvidia-smi)
  Holder holder;     // every field empty when nothing is known
};

// The state of one source ("kubelet", "hpc"): gpuscope_attribution_up{source}.
struct AttributionSource {
  std::string name;
  bool up = false;
  std::string error;  // one sentence when !up
  // Failed attempts so far, for a source that counts them ("resourceslices"):
  // gpuscope_attribution_failures_total{source}.
  std::optional<uint64_t> failures;
  // Jobs whose GPUs this source named otherwise than their processes' own
  // cgroups since the agent started, each counted once
  // (gpuscope_attribution_conflicts_total{source}); kept by the Service.
  uint64_t conflicts_total = 0;
};

// A Slurm job whose GPUs a source (the mapping directory, "hpc") names
// otherwise than the cgroups of the job's own processes on the GPUs: the
// cgroups win, the source's GPUs for that job are dropped.
struct AttributionConflict {
  std::string source;  // "hpc"
  std::string job;
  std::string named, found;  // "GPU 0 (GPU-...)": what the source named, where the processes run
  auto operator<=>(const AttributionConflict&) const = default;
};

struct Attribution {
  // DeviceKey(gpu) -> holders, sorted and unique.
  std::map<std::string, std::vector<Holder>> holders;
  // Host pid -> the holder of that GPU process alone (its pod from its
  // container, its Slurm job from its cgroup; workload as for devices).
  // Processes nothing is known about are absent.
  std::map<unsigned, Holder> processes;
  std::vector<AttributionSource> sources;      // only the sources that are enabled
  std::vector<AttributionConflict> conflicts;  // found in this refresh, sorted

  // The holder of one process; null when nothing is known about it.
  const Holder* OfProcess(unsigned pid) const {
    const auto it = processes.find(pid);
    return it == processes.end() ? nullptr : &it->second;
  }
  // Each of `processes` with its holder, in the order given.
  std::vector<ProcessHolding> Holdings(const std::vector<ProcessInfo>& processes) const {
    std::vector<ProcessHolding> out;
    for (const ProcessInfo& p : processes) {
      const Holder* h = OfProcess(p.pid);
      out.push_back({p.pid, p.name, h ? *h : Holder{}});
    }
    return out;
  }
  // The holders of one GPU or MIG instance; empty when unattributed.
  const std::vector<Holder>& Of(const GpuInfo& gpu) const {
    static const std::vector<Holder> kNone;
    const auto it = holders.find(DeviceKey(gpu));
    return it == holders.end() ? kNone : it->second;
  }
  // "GPU-<uuid>" for a whole GPU, "GPU-<uuid>/<gpu instance>" for a MIG one.
  static std::string DeviceKey(const GpuInfo& gpu) {
    return gpu.is_mig() ? gpu.uuid + "/" + std::to_string(*gpu.gpu_instance_id) : gpu.uuid;
  }
};
using AttributionPtr = std::shared_ptr<const Attribution>;

}  // namespace gpuscope
