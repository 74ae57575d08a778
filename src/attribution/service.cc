#include "attribution/service.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "attribution/cgroup.h"
#include "attribution/hpc_jobs.h"
#include "attribution/pod_map.h"
#include "attribution/workload.h"

namespace gpuscope::attribution {
namespace {

// What identifies the socket file: a kubelet restart creates a new one.
struct SocketIdentity {
  bool exists = false;
  ino_t inode = 0;
  time_t mtime = 0;
  bool operator==(const SocketIdentity&) const = default;
};

SocketIdentity Identify(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_ino, st.st_mtime};
}

// Every pairing of a device's pods with its jobs (dcgm-exporter applies the
// two mappings one after the other, which gives the same product).
std::vector<Holder> Combine(const std::vector<PodRef>& pods, const std::vector<std::string>* jobs) {
  std::vector<Holder> out;
  const size_t pod_count = std::max<size_t>(pods.size(), 1);
  const size_t job_count = jobs ? std::max<size_t>(jobs->size(), 1) : 1;
  for (size_t p = 0; p < pod_count; ++p) {
    for (size_t j = 0; j < job_count; ++j) {
      Holder h;
      if (p < pods.size()) {
        h.namespace_name = pods[p].namespace_name;
        h.pod = pods[p].pod;
        h.container = pods[p].container;
      }
      if (jobs && j < jobs->size()) h.hpc_job = (*jobs)[j];
      h.workload = WorkloadName(h.pod, "", h.hpc_job, "");
      if (!h.workload.empty()) out.push_back(std::move(h));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What the cgroup of each GPU process says (read once per refresh); a process
// that is gone or unreadable is absent.
std::map<unsigned, CgroupOwner> ReadOwners(const std::string& proc_root,
                                           const DeviceProcesses& processes) {
  std::map<unsigned, CgroupOwner> out;
  for (const auto& [key, list] : processes) {
    for (const DeviceProcess& p : list) {
      if (out.contains(p.pid)) continue;
      Result<CgroupOwner> owner = ReadProcessCgroup(proc_root, p.pid);
      if (owner.ok()) out.emplace(p.pid, std::move(*owner));
    }
  }
  return out;
}

const std::vector<DeviceProcess>& ProcessesOn(const DeviceProcesses& processes,
                                              const GpuInfo& device) {
  static const std::vector<DeviceProcess> kNone;
  const auto it = processes.find(Attribution::DeviceKey(device));
  return it == processes.end() ? kNone : it->second;
}

// A MIG-enabled GPU lists the processes of its instances too: those name the
// instances, not the whole GPU.
bool ProcessesNameDevice(const GpuInfo& device) { return !device.mig_enabled || device.is_mig(); }

void AddUnique(std::vector<std::string>& ids, const std::string& id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

// Adds the Slurm jobs named by the cgroups of each device's processes to the
// jobs of that device.
void AddCgroupJobs(const std::vector<GpuInfo>& devices, const DeviceProcesses& processes,
                   const std::map<unsigned, CgroupOwner>& owners,
                   std::map<std::string, std::vector<std::string>>& jobs) {
  for (const GpuInfo& device : devices) {
    for (const DeviceProcess& p : ProcessesOn(processes, device)) {
      const auto owner = owners.find(p.pid);
      if (owner == owners.end() || owner->second.slurm_job.empty()) continue;  // not a Slurm task
      AddUnique(jobs[Attribution::DeviceKey(device)], owner->second.slurm_job);
    }
  }
}

// The pod of one process: the CRI's answer for its container id, else the one
// container the kubelet granted the device to (a process in some container
// on an exclusively granted GPU can only be that container's).
std::optional<PodRef> PodOfProcess(const CgroupOwner& owner, const std::vector<PodRef>& device_pods,
                                   const std::map<std::string, CriContainer>* cri) {
  if (owner.container_id.empty()) return std::nullopt;  // a host process
  if (cri) {
    if (const CriContainer* c = FindContainer(*cri, owner.container_id)) {
      return PodRef{c->namespace_name, c->pod, c->container};
    }
  }
  if (device_pods.size() == 1) return device_pods[0];
  return std::nullopt;
}

// The holder of every GPU process something is known about.
std::map<unsigned, Holder> ProcessHolders(const ServiceOptions& options,
                                          const std::vector<GpuInfo>& devices,
                                          const DeviceProcesses& processes,
                                          const std::map<unsigned, CgroupOwner>& owners,
                                          const std::vector<std::vector<PodRef>>& pods,
                                          const std::map<std::string, CriContainer>* cri) {
  std::map<unsigned, Holder> out;
  for (size_t i = 0; i < devices.size(); ++i) {
    for (const DeviceProcess& p : ProcessesOn(processes, devices[i])) {
      if (out.contains(p.pid) && !out[p.pid].pod.empty()) continue;
      Holder h;
      const auto owner = owners.find(p.pid);
      if (owner != owners.end()) {
        // A MIG parent's grant says nothing of a process on one of its instances.
        static const std::vector<PodRef> kNone;
        if (auto pod = PodOfProcess(owner->second,
                                    ProcessesNameDevice(devices[i]) ? pods[i] : kNone, cri)) {
          h.namespace_name = pod->namespace_name;
          h.pod = pod->pod;
          h.container = pod->container;
        }
        h.hpc_job = owner->second.slurm_job;
      }
      h.workload = WorkloadName(h.pod, "", h.hpc_job, options.process_names ? p.name : "");
      if (!h.workload.empty()) out[p.pid] = std::move(h);
    }
  }
  return out;
}

// Pods named through the CRI by a device's processes, for a device the
// kubelet gave none (the kubelet off or down, or a GPU used outside the
// device plugin).
std::vector<PodRef> PodsOfProcesses(const GpuInfo& device, const DeviceProcesses& processes,
                                    const std::map<unsigned, Holder>& holders) {
  std::vector<PodRef> out;
  if (!ProcessesNameDevice(device)) return out;
  for (const DeviceProcess& p : ProcessesOn(processes, device)) {
    const auto h = holders.find(p.pid);
    if (h == holders.end() || h->second.pod.empty()) continue;
    PodRef ref{h->second.namespace_name, h->second.pod, h->second.container};
    if (std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(std::move(ref));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// With names opted in, a device no pod or job holds is held by the workloads
// its processes name.
std::vector<Holder> NamedByProcesses(const GpuInfo& device, const DeviceProcesses& processes) {
  std::vector<Holder> out;
  if (!ProcessesNameDevice(device)) return out;
  for (const DeviceProcess& p : ProcessesOn(processes, device)) {
    if (p.name.empty()) continue;
    Holder h;
    h.workload = WorkloadName("", "", "", p.name);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Asks the CRI, when configured, recording its state in `out`.
std::optional<std::map<std::string, CriContainer>> AskCri(const CriOptions& options,
                                                          Attribution& out) {
  if (options.socket.empty()) return std::nullopt;
  AttributionSource& source = out.sources.emplace_back(AttributionSource{"cri"});
  auto containers = ListContainers(options);
  source.up = containers.ok();
  if (!containers.ok()) {
    source.error = containers.status().message();
    return std::nullopt;
  }
  return std::move(*containers);
}

}  // namespace

DeviceProcesses ProcessesOf(const Snapshot& snapshot) {
  DeviceProcesses out;
  for (size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    for (const ProcessInfo& p : snapshot.samples[i].processes) {
      out[Attribution::DeviceKey(snapshot.gpus[i])].push_back({p.pid, p.name});
    }
  }
  return out;
}

Attribution Collect(const ServiceOptions& options, const std::vector<GpuInfo>& devices,
                    const DeviceProcesses& processes) {
  Attribution out;
  std::vector<std::vector<PodRef>> pods(devices.size());
  if (options.kubernetes) {
    AttributionSource& source = out.sources.emplace_back(AttributionSource{"kubelet"});
    const auto granted = ListGpuDevices(options.kubelet);
    source.up = granted.ok();
    if (granted.ok()) {
      pods = BuildPodMap(*granted, devices);
    } else {
      source.error = granted.status().message();
    }
  }
  const auto cri = AskCri(options.cri, out);
  std::map<std::string, std::vector<std::string>> jobs;  // by DeviceKey
  if (!options.hpc_job_dir.empty()) {
    AttributionSource& source = out.sources.emplace_back(AttributionSource{"hpc"});
    const auto read = ReadHpcJobDir(options.hpc_job_dir);
    source.up = read.ok();
    if (!read.ok()) source.error = read.status().message();
    for (size_t i = 0; read.ok() && i < devices.size(); ++i) {
      const auto file = read->find(devices[i].index);
      if (file != read->end()) jobs[Attribution::DeviceKey(devices[i])] = file->second;
    }
  }
  const std::map<unsigned, CgroupOwner> owners = ReadOwners(options.proc_root, processes);
  AddCgroupJobs(devices, processes, owners, jobs);
  out.processes = ProcessHolders(options, devices, processes, owners, pods, cri ? &*cri : nullptr);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (pods[i].empty() && cri) pods[i] = PodsOfProcesses(devices[i], processes, out.processes);
    const auto job = jobs.find(Attribution::DeviceKey(devices[i]));
    std::vector<Holder> holders = Combine(pods[i], job == jobs.end() ? nullptr : &job->second);
    if (holders.empty() && options.process_names) {
      holders = NamedByProcesses(devices[i], processes);
    }
    if (!holders.empty()) out.holders[Attribution::DeviceKey(devices[i])] = std::move(holders);
  }
  return out;
}

Service::Service(ServiceOptions options) : options_(std::move(options)) {
  Attribution empty;
  if (options_.kubernetes) empty.sources.push_back({"kubelet", false, "not asked yet"});
  if (!options_.cri.socket.empty()) empty.sources.push_back({"cri", false, "not asked yet"});
  if (!options_.hpc_job_dir.empty()) empty.sources.push_back({"hpc", false, "not read yet"});
  latest_.store(std::make_shared<const Attribution>(std::move(empty)));
}

Service::~Service() { Stop(); }

void Service::SetDevices(std::vector<GpuInfo> devices) {
  std::lock_guard lock(mu_);
  devices_ = std::move(devices);
  devices_changed_ = true;
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { Loop(); });
  wake_.notify_all();
}

void Service::SetProcesses(DeviceProcesses processes) {
  std::lock_guard lock(mu_);
  if (processes == processes_) return;
  processes_ = std::move(processes);
  devices_changed_ = true;
  wake_.notify_all();
}

void Service::Stop() {
  std::thread thread;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    thread = std::move(thread_);
  }
  wake_.notify_all();
  if (thread.joinable()) thread.join();
}

void Service::Loop() {
  using Seconds = std::chrono::duration<double>;
  const auto period = Seconds(options_.refresh_s);
  auto last_refresh = std::chrono::steady_clock::time_point::min();
  SocketIdentity socket = Identify(options_.kubelet.socket);
  std::vector<std::string> last_errors;
  std::unique_lock lock(mu_);
  while (!stop_) {
    const SocketIdentity now_socket =
        options_.kubernetes ? Identify(options_.kubelet.socket) : SocketIdentity{};
    const bool due = devices_changed_ || now_socket != socket ||
                     std::chrono::steady_clock::now() - last_refresh >= period;
    if (due) {
      socket = now_socket;
      devices_changed_ = false;
      const std::vector<GpuInfo> devices = devices_;
      const DeviceProcesses processes = processes_;
      lock.unlock();
      auto fresh = std::make_shared<const Attribution>(Collect(options_, devices, processes));
      std::vector<std::string> errors;
      for (const auto& source : fresh->sources) errors.push_back(source.error);
      if (errors != last_errors) {  // log changes only, not every failed retry
        for (const auto& source : fresh->sources) {
          if (!source.up)
            spdlog::warn("attribution source {} is down: {}", source.name, source.error);
          else
            spdlog::info("attribution source {} is up", source.name);
        }
        last_errors = std::move(errors);
      }
      latest_.store(std::move(fresh));
      refreshes_.fetch_add(1);
      last_refresh = std::chrono::steady_clock::now();
      lock.lock();
      continue;
    }
    wake_.wait_for(lock, Seconds(std::min(options_.change_poll_s, options_.refresh_s)));
  }
}

}  // namespace gpuscope::attribution
