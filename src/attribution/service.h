// Keeps the attribution map fresh, off the scrape path: a thread of its own
// asks the enabled sources (source.h: kubelet, CRI, HPC directory, the GPU
// processes' cgroups under proc_root, process names) every `refresh_s`, and
// at once when a source asks for it (the kubelet's socket is replaced: a
// kubelet restart), the device inventory changes or the processes on the GPUs
// change, then publishes a new immutable Attribution. Readers take Latest()
// (an atomic pointer load) and never wait on a source.
//
// A source that fails keeps the service running: its facts are dropped, its
// `up` is false with the reason, the other sources' labels stay, and the next
// refresh retries, so it heals by itself when the kubelet or the mapping
// directory comes back.
//
// Adding a source (one file, one line):
//   1. src/attribution/<name>_source.cc: a class implementing Source
//      (source.h) in an anonymous namespace, whose Read asks the outside world
//      (bounded: a timeout, a size limit, no blocking read) and returns its
//      facts as Evidence, and `std::unique_ptr<Source> Make<Name>Source(const
//      ServiceOptions&)`, null when the options leave it off. Its options, if
//      any, are a field of ServiceOptions below.
//   2. One line `X(<Name>)` in GPUSCOPE_ATTRIBUTION_SOURCES (source.h), at
//      its place: the order is the order of gpuscope_attribution_up and, where
//      two sources name the same container or process, the earlier one wins.
//   A new kind of fact is a field of Evidence, with its merge in
//   Evidence::Merge and its precedence in resolve.h.
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attribution/cri.h"
#include "attribution/kubelet.h"
#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::attribution {

struct ServiceOptions {
  bool kubernetes = false;   // -k: ask the kubelet's pod-resources API
  KubeletOptions kubelet;    // socket, timeout, message limit
  std::string hpc_job_dir;   // --hpc-job-mapping-dir; empty: off
  double refresh_s = 10;     // period between refreshes
  double change_poll_s = 1;  // how often the kubelet socket is checked for replacement
  // Where /proc is (tests point it at fixtures): the cgroup of each GPU
  // process names its Slurm job on nodes without a mapping directory.
  std::string proc_root = "/proc";
  // --container-runtime-socket: the CRI socket that names the pod of each GPU
  // process's container; empty: off (a process on a GPU granted to exactly one
  // container is then that container's).
  CriOptions cri;
  // --process-names: process names may be exported and name the workload of
  // a GPU that no pod or job holds (privacy: off by default).
  bool process_names = false;
};

// A process NVML lists on a device.
struct DeviceProcess {
  unsigned pid = 0;
  std::string name;  // empty when NVML did not say
  bool operator==(const DeviceProcess&) const = default;
};
// The processes running on each device, by Attribution::DeviceKey.
using DeviceProcesses = std::map<std::string, std::vector<DeviceProcess>>;

// On a vGPU host board, the VMs whose virtual GPUs it carries (VgpuInstance::vm:
// the VM's name, else its id), by Attribution::DeviceKey: the VMs hold the board.
using DeviceVms = std::map<std::string, std::vector<std::string>>;

// The processes NVML listed on each device of a snapshot.
DeviceProcesses ProcessesOf(const Snapshot& snapshot);
// The VMs of each vGPU host board of a snapshot.
DeviceVms VmsOf(const Snapshot& snapshot);

// One refresh, without a thread: what Service publishes (pure but for I/O),
// from the sources these options register (source.h).
Attribution Collect(const ServiceOptions& options, const std::vector<GpuInfo>& devices,
                    const DeviceProcesses& processes = {}, const DeviceVms& vms = {});

class Service {
 public:
  explicit Service(ServiceOptions options);
  ~Service();  // stops the thread
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Starts refreshing for these devices (the inventory); call again when the
  // inventory changes.
  void SetDevices(std::vector<GpuInfo> devices);
  // The processes on each device (from a slow sampling cycle); a change
  // triggers a refresh.
  void SetProcesses(DeviceProcesses processes, DeviceVms vms = {});
  // Stops refreshing; returns within kStopWait even when a source hangs.
  void Stop();

  // The latest map; an empty one (no holders, sources down) before the first refresh.
  AttributionPtr Latest() const;
  // Refreshes published so far (tests wait on it).
  uint64_t refreshes() const;

  // How long Stop() waits for a refresh in progress; a refresh blocked longer
  // (in a hung read or call) finishes on its own thread and publishes nothing.
  static constexpr std::chrono::seconds kStopWait{2};

 private:
  struct State;
  static void Loop(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  std::thread thread_;  // started by the first SetDevices, under state_->mu
};

}  // namespace gpuscope::attribution
