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

#include <map>
#include <memory>
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
    return out;
  }
};

// The state of one source ("kubelet", "hpc"): gpuscope_attribution_up{source}.
struct AttributionSource {
  std::string name;
  bool up = false;
  std::string error;  // one sentence when !up
};

struct Attribution {
  // DeviceKey(gpu) -> holders, sorted and unique.
  std::map<std::string, std::vector<Holder>> holders;
  std::vector<AttributionSource> sources;  // only the sources that are enabled

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
