// Each holder's measured share of a shared GPU's SM time, and how a device's
// quantities (held time, busy time, energy) are split between its holders:
// by those shares where NVML measured them, evenly where it did not
// (docs/attribution.md, "Each holder's share of a shared GPU").
//
// A holder's share is the sum of the ProcessInfo::sm_share of the device's
// processes whose own holder (Attribution::processes) is that holder: the
// same pod (namespace, pod, container) for a process in a pod, else the same
// Slurm job, else the same workload (process names). A process that two
// holders match (a pod paired with two jobs) counts half to each; a process
// no holder matches (a host process, an unattributed container) counts to
// none, so the shares add up to at most the GPU's busy share. In the split,
// that unheld use goes to the holders evenly: a holder that hides its
// processes from attribution does not shift its use onto the others.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"

namespace gpuscope {

// Whether a device holder `device` is the holder of a process whose own holder is `process`.
inline bool HoldsProcess(const Holder& device, const Holder& process) {
  if (!process.pod.empty()) {
    return device.namespace_name == process.namespace_name && device.pod == process.pod &&
           device.container == process.container &&
           (process.hpc_job.empty() || device.hpc_job.empty() || device.hpc_job == process.hpc_job);
  }
  if (!process.hpc_job.empty()) return device.hpc_job == process.hpc_job;
  return device.pod.empty() && device.hpc_job.empty() && device.workload == process.workload;
}

// On a vGPU host board held by its VMs (attribution/resolve.cc): each VM's
// share is what the vGPU scheduler gave its instances (VgpuInstance::
// sm_utilization); nullopt when NVML gave no utilization sample.
inline std::optional<std::vector<double>> VmSmShares(const std::vector<Holder>& holders,
                                                     const GpuSample& sample) {
  std::vector<double> shares(holders.size(), 0.0);
  bool measured = false;
  for (const VgpuInstance& v : sample.vgpus) {
    if (!v.sm_utilization) continue;
    measured = true;
    for (std::size_t i = 0; i < holders.size(); ++i) {
      const Holder& h = holders[i];
      if (h.pod.empty() && h.hpc_job.empty() && h.workload == v.vm())
        shares[i] += *v.sm_utilization;
    }
  }
  if (!measured) return std::nullopt;
  for (double& s : shares) s = std::min(s, 1.0);
  return shares;
}

// The share of the device's SM time each of its holders' processes used,
// parallel to attribution.Of(gpu), each in [0, 1]; nullopt when not measured:
// no holders, a MIG device, or per-process samples unsupported or not read
// (GpuSample::process_sm_measured). A vGPU host board: its VMs' shares.
// `unheld`, when given, gets the share of the processes no holder matches.
inline std::optional<std::vector<double>> HolderSmShares(const Attribution& attribution,
                                                         const GpuInfo& gpu,
                                                         const GpuSample& sample,
                                                         double* unheld = nullptr) {
  const std::vector<Holder>& holders = attribution.Of(gpu);
  if (holders.empty() || gpu.is_mig()) return std::nullopt;
  if (!sample.vgpus.empty()) {
    if (unheld) *unheld = 0;
    return VmSmShares(holders, sample);
  }
  if (!sample.process_sm_measured) return std::nullopt;
  std::vector<double> shares(holders.size(), 0.0);
  double nobody = 0;
  std::vector<std::size_t> matches;
  for (const ProcessInfo& p : sample.processes) {
    if (!p.sm_share || *p.sm_share <= 0) continue;
    const Holder* own = attribution.OfProcess(p.pid);
    matches.clear();
    for (std::size_t i = 0; own && i < holders.size(); ++i) {
      if (HoldsProcess(holders[i], *own)) matches.push_back(i);
    }
    if (matches.empty()) nobody += *p.sm_share;
    for (std::size_t i : matches) shares[i] += *p.sm_share / static_cast<double>(matches.size());
  }
  for (double& s : shares) s = std::min(s, 1.0);
  if (unheld) *unheld = std::min(nobody, 1.0);
  return shares;
}

enum class SplitMethod : uint8_t {
  kSole,      // one holder: everything is its
  kMeasured,  // by the holders' measured SM shares
  kEven,      // 1 / holders: MIG, samples unsupported, or no holder's process ran
};

// As the reports name it.
inline std::string_view SplitMethodName(SplitMethod m) {
  switch (m) {
    case SplitMethod::kSole:
      return "sole holder";
    case SplitMethod::kMeasured:
      return "measured";
    default:
      return "even split";
  }
}

struct DeviceSplit {
  SplitMethod method = SplitMethod::kEven;
  std::vector<double> weights;  // parallel to attribution.Of(gpu), adding up to 1
};

// How the device's quantities go to its holders when measured and some
// holder's process ran: each its share of all the processes' use, plus an
// even part of the unheld use; else evenly.
inline DeviceSplit SplitDevice(const Attribution& attribution, const GpuInfo& gpu,
                               const GpuSample& sample) {
  DeviceSplit out;
  const std::size_t n = attribution.Of(gpu).size();
  if (n == 0) return out;
  if (n == 1) return {SplitMethod::kSole, {1.0}};
  const double even = 1.0 / static_cast<double>(n);
  double unheld = 0;
  if (auto shares = HolderSmShares(attribution, gpu, sample, &unheld)) {
    double held = 0;
    for (double s : *shares) held += s;
    if (held > 0) {
      out.method = SplitMethod::kMeasured;
      const double total = held + unheld;
      for (double s : *shares) out.weights.push_back(s / total + unheld / total * even);
      return out;
    }
  }
  out.weights.assign(n, even);
  return out;
}

}  // namespace gpuscope
