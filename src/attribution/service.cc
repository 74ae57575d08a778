#include "attribution/service.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

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

// Adds the Slurm jobs named by the cgroups of each device's processes to the
// jobs of that device (by GPU index, as the mapping directory keys them).
void AddCgroupJobs(const std::string& proc_root, const std::vector<GpuInfo>& devices,
                   const DeviceProcesses& processes,
                   std::map<std::string, std::vector<std::string>>& jobs) {
  for (const GpuInfo& device : devices) {
    const auto pids = processes.find(Attribution::DeviceKey(device));
    if (pids == processes.end()) continue;
    for (unsigned pid : pids->second) {
      const Result<CgroupOwner> owner = ReadProcessCgroup(proc_root, pid);
      if (!owner.ok() || owner->slurm_job.empty()) continue;  // gone, or not a Slurm task
      auto& ids = jobs[Attribution::DeviceKey(device)];
      if (std::find(ids.begin(), ids.end(), owner->slurm_job) == ids.end()) {
        ids.push_back(owner->slurm_job);
      }
    }
  }
}

}  // namespace

DeviceProcesses ProcessesOf(const Snapshot& snapshot) {
  DeviceProcesses out;
  for (size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    for (const ProcessInfo& p : snapshot.samples[i].processes) {
      out[Attribution::DeviceKey(snapshot.gpus[i])].push_back(p.pid);
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
  AddCgroupJobs(options.proc_root, devices, processes, jobs);
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto job = jobs.find(Attribution::DeviceKey(devices[i]));
    std::vector<Holder> holders = Combine(pods[i], job == jobs.end() ? nullptr : &job->second);
    if (!holders.empty()) out.holders[Attribution::DeviceKey(devices[i])] = std::move(holders);
  }
  return out;
}

Service::Service(ServiceOptions options) : options_(std::move(options)) {
  Attribution empty;
  if (options_.kubernetes) empty.sources.push_back({"kubelet", false, "not asked yet"});
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
