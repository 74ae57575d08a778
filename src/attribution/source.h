// Attribution sources: each one reads one part of the outside world (the
// kubelet, the container runtime, the HPC mapping directory, the GPU
// processes' cgroups, ...) and returns what it found as Evidence. A refresh
// asks every registered source in order, merges their Evidence and resolves
// it into an Attribution (resolve.h holds the precedence rules).
//
// The shape of dcgm-exporter's list of transformations (one file a source,
// registered in one list), with one difference: a source returns its facts
// instead of patching a shared map, so a source that fails contributes
// nothing, never half its answer, and cannot disturb what the others found.
//
// How to add a source: service.h.
// Contracts: Read is bounded (a timeout on every call, a size limit on every
// answer, no read that can block on a FIFO) and reports failure as a Status.
// Thread safety: a Source is used by one thread at a time (the Service's
// refresh thread, or one Collect call); Evidence and Inputs are values.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/cgroup.h"
#include "attribution/cri.h"
#include "attribution/pod_map.h"
#include "attribution/service.h"
#include "gpuscope/attribution.h"
#include "gpuscope/status.h"

namespace gpuscope::attribution {

// What a refresh is about: the device inventory and the processes on it.
struct Inputs {
  const std::vector<GpuInfo>& devices;
  const DeviceProcesses& processes;
  const DeviceVms* vms = nullptr;  // vGPU host boards' VMs; null: none

  // The processes NVML lists on `device`; empty when none.
  const std::vector<DeviceProcess>& On(const GpuInfo& device) const;
};

// What the sources found in one refresh. Every field is empty when no
// source found anything of its kind.
struct Evidence {
  // DeviceKey -> the pods the kubelet granted that device (sorted, unique).
  std::map<std::string, std::vector<PodRef>> pods;
  // Container id -> its pod, when a container runtime answered (even with no
  // containers): its answer alone then names a container's pod.
  std::optional<std::map<std::string, CriContainer>> containers;
  // DeviceKey -> Slurm job ids the mapping directory names, in the order
  // found, unique.
  std::map<std::string, std::vector<std::string>> jobs;
  // DeviceKey -> Slurm job ids the cgroups of the device's processes name.
  // Where they disagree with `jobs` about a job's GPUs, these win (resolve.h).
  std::map<std::string, std::vector<std::string>> process_jobs;
  // Host pid -> who that process's cgroup says owns it.
  std::map<unsigned, CgroupOwner> owners;
  // NVML's process names may name workloads (--process-names).
  bool process_names = false;
  // The states of what a source asked on its behalf (the kubelet source's
  // ResourceSlice reader), listed after the source's own in
  // gpuscope_attribution_up.
  std::vector<AttributionSource> more_sources;

  // Adds the facts of a source registered later. Lists are joined; where
  // both name the same container id or pid, this (the earlier) fact stands.
  void Merge(Evidence later);
};

class Source {
 public:
  virtual ~Source() = default;

  // The `source` label of gpuscope_attribution_up and of the logs: "kubelet".
  virtual std::string_view name() const = 0;
  // False for a source that cannot be down as a whole (a process whose
  // cgroup cannot be read is only absent): it has no `up` series.
  virtual bool reports_up() const { return true; }
  // Its `up` error before the first refresh.
  virtual std::string_view not_yet() const { return "not asked yet"; }

  // Asks the outside world. On failure the source is down with the Status's
  // message, and none of its facts are used.
  virtual Result<Evidence> Read(const Inputs& inputs) const = 0;

  // Whether the source wants a refresh now, before the period is over (the
  // kubelet's socket was replaced). Called every change_poll_s.
  virtual bool WantsRefresh() { return false; }
};

using Sources = std::vector<std::unique_ptr<Source>>;

// The registered sources, in the order they are asked and merged (which is
// their order in gpuscope_attribution_up and their precedence in
// Evidence::Merge). One line a source; Make<Name>Source is defined in the
// source's own file and returns null when `options` leave the source off.
#define GPUSCOPE_ATTRIBUTION_SOURCES(X)                                     \
  X(Kubelet)        /* kubelet_source.cc: pod-resources grants (-k) */      \
  X(Cri)            /* cri_source.cc: each container's pod */               \
  X(HpcJobDir)      /* hpc_job_dir_source.cc: --hpc-job-mapping-dir */      \
  X(ProcessCgroups) /* process_cgroups_source.cc: containers, Slurm jobs */ \
  X(ProcessNames)   /* process_names_source.cc: --process-names */

#define GPUSCOPE_DECLARE_ATTRIBUTION_SOURCE_(Name) \
  std::unique_ptr<Source> Make##Name##Source(const ServiceOptions& options);
GPUSCOPE_ATTRIBUTION_SOURCES(GPUSCOPE_DECLARE_ATTRIBUTION_SOURCE_)
#undef GPUSCOPE_DECLARE_ATTRIBUTION_SOURCE_

// The sources `options` turn on, in registration order.
Sources BuildSources(const ServiceOptions& options);

// One refresh: asks each source in order, merges what the ones that answered
// found, and resolves it (resolve.h). `sources` of the result lists every
// source that reports_up(), in order. A source that throws is down too.
Attribution Collect(const Sources& sources, const Inputs& inputs);

}  // namespace gpuscope::attribution
