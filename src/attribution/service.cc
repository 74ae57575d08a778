#include "attribution/service.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
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

// The pod of one process: the CRI's answer for its container id, else (the
// CRI off or down) the one container the kubelet granted the device to: a
// process in some pod's container on an exclusively granted GPU can only be
// that container's. A container id the CRI does not list names no pod, even
// there: the cgroup may be stale, or a name someone chose.
std::optional<PodRef> PodOfProcess(const CgroupOwner& owner, const std::vector<PodRef>& device_pods,
                                   const std::map<std::string, CriContainer>* cri) {
  if (owner.container_id.empty()) return std::nullopt;  // a host process
  if (cri) {
    const CriContainer* c = FindContainer(*cri, owner.container_id);
    if (!c) return std::nullopt;
    return PodRef{c->namespace_name, c->pod, c->container};
  }
  if (owner.pod_uid.empty()) return std::nullopt;  // a container outside Kubernetes
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

// What the refresh thread shares with its Service. The thread owns a
// reference, so a thread that Stop() stopped waiting for (blocked in a read)
// finishes on a live state after the Service is gone.
struct Service::State {
  explicit State(ServiceOptions o) : options(std::move(o)) {}
  const ServiceOptions options;
  std::mutex mu;
  std::condition_variable wake;    // work or stop for the thread
  std::condition_variable exited;  // the thread has returned
  std::vector<GpuInfo> devices;    // under mu
  DeviceProcesses processes;       // under mu
  bool devices_changed = false;    // under mu; devices or processes
  bool stop = false;               // under mu
  bool done = false;               // under mu; the thread has returned
  std::atomic<std::shared_ptr<const Attribution>> latest;
  std::atomic<uint64_t> refreshes{0};
};

namespace {

// Logs the sources whose state changed since the last refresh (not every
// failed retry).
void LogSourceChanges(const Attribution& fresh, std::vector<std::string>& last_errors) {
  std::vector<std::string> errors;
  for (const auto& source : fresh.sources) errors.push_back(source.error);
  if (errors == last_errors) return;
  for (const auto& source : fresh.sources) {
    if (!source.up)
      spdlog::warn("attribution source {} is down: {}", source.name, source.error);
    else
      spdlog::info("attribution source {} is up", source.name);
  }
  last_errors = std::move(errors);
}

}  // namespace

Service::Service(ServiceOptions options) : state_(std::make_shared<State>(std::move(options))) {
  const ServiceOptions& o = state_->options;
  Attribution empty;
  if (o.kubernetes) empty.sources.push_back({"kubelet", false, "not asked yet"});
  if (!o.cri.socket.empty()) empty.sources.push_back({"cri", false, "not asked yet"});
  if (!o.hpc_job_dir.empty()) empty.sources.push_back({"hpc", false, "not read yet"});
  state_->latest.store(std::make_shared<const Attribution>(std::move(empty)));
}

Service::~Service() { Stop(); }

AttributionPtr Service::Latest() const { return state_->latest.load(); }

uint64_t Service::refreshes() const { return state_->refreshes.load(); }

void Service::SetDevices(std::vector<GpuInfo> devices) {
  std::lock_guard lock(state_->mu);
  state_->devices = std::move(devices);
  state_->devices_changed = true;
  if (!thread_.joinable() && !state_->stop) thread_ = std::thread(Loop, state_);
  state_->wake.notify_all();
}

void Service::SetProcesses(DeviceProcesses processes) {
  std::lock_guard lock(state_->mu);
  if (processes == state_->processes) return;
  state_->processes = std::move(processes);
  state_->devices_changed = true;
  state_->wake.notify_all();
}

void Service::Stop() {
  std::unique_lock lock(state_->mu);
  state_->stop = true;
  state_->wake.notify_all();
  std::thread thread = std::move(thread_);
  if (!thread.joinable()) return;
  // Shutdown never waits on a source: a refresh blocked in a read (a hung
  // mount under the mapping directory, a runtime that holds its answer) is
  // left to finish on its own and publishes nothing.
  if (state_->exited.wait_for(lock, kStopWait, [&] { return state_->done; })) {
    lock.unlock();
    thread.join();
    return;
  }
  spdlog::warn("attribution refresh still blocked in a source after {} s; not waiting for it",
               std::chrono::duration<double>(kStopWait).count());
  thread.detach();
}

void Service::Loop(std::shared_ptr<State> state) {
  using Seconds = std::chrono::duration<double>;
  const ServiceOptions& options = state->options;
  const auto period = Seconds(options.refresh_s);
  auto last_refresh = std::chrono::steady_clock::time_point::min();
  SocketIdentity socket = Identify(options.kubelet.socket);
  std::vector<std::string> last_errors;
  std::unique_lock lock(state->mu);
  while (!state->stop) {
    const SocketIdentity now_socket =
        options.kubernetes ? Identify(options.kubelet.socket) : SocketIdentity{};
    const bool due = state->devices_changed || now_socket != socket ||
                     std::chrono::steady_clock::now() - last_refresh >= period;
    if (!due) {
      state->wake.wait_for(lock, Seconds(std::min(options.change_poll_s, options.refresh_s)));
      continue;
    }
    socket = now_socket;
    state->devices_changed = false;
    const std::vector<GpuInfo> devices = state->devices;
    const DeviceProcesses processes = state->processes;
    lock.unlock();
    auto fresh = std::make_shared<const Attribution>(Collect(options, devices, processes));
    lock.lock();
    if (state->stop) break;  // Stop() may have stopped waiting: touch nothing more
    LogSourceChanges(*fresh, last_errors);
    state->latest.store(std::move(fresh));
    state->refreshes.fetch_add(1);
    last_refresh = std::chrono::steady_clock::now();
  }
  state->done = true;
  state->exited.notify_all();
}

}  // namespace gpuscope::attribution
