// Which GPUs an application's points belong to: a sender's resource
// attributes (Origin) resolved through the snapshot's processes and the
// attribution map (Snapshot::attribution, the pods and jobs of each device).
//
// In order, the first that finds a GPU wins:
//   1. process.pid: the GPUs NVML lists that process on;
//   2. k8s.pod.name (and k8s.namespace.name when given): the GPUs granted to
//      that pod;
//   3. service.name: the GPUs whose holder's workload has that name (a
//      Deployment, a Slurm job name), or whose process has that name;
//   4. host.name: a pod's name (a container's host name is its pod's), else
//      this node's name: every GPU that runs work (a process or a holder).
// A sender on several GPUs maps to all of them (one series per GPU). Nothing
// found: unattributed (gpu="", UUID="").
//
// Thread safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"
#include "otlp/model.h"

namespace gpuscope::otlp {

// One GPU a sender's series is exported on.
struct Target {
  int rank = -1;                    // order of the GPU (snapshot slot); -1 unattributed
  std::string gpu, uuid;            // "" when unattributed
  std::string workload;             // the holder's, else service.name, else the process name
  std::string namespace_name, pod;  // the holder's (the origin's own win when it has them)
  auto operator<=>(const Target&) const = default;
};

class Resolver {
 public:
  Resolver() = default;
  explicit Resolver(const Snapshot& snapshot);

  // The GPUs of `origin`, in GPU order; empty when unattributed.
  std::vector<Target> Resolve(const Origin& origin) const;

 private:
  struct Device {
    int rank = 0;
    std::string gpu, uuid;
    std::vector<ProcessInfo> processes;
    std::vector<Holder> holders;
  };
  template <typename Match>
  std::vector<Target> Where(const Origin& origin, Match match) const;

  std::vector<Device> devices_;
  std::string hostname_;
};

}  // namespace gpuscope::otlp
