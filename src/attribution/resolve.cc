#include "attribution/resolve.h"

#include <algorithm>
#include <optional>
#include <set>

#include "attribution/workload.h"

namespace gpuscope::attribution {
namespace {

const std::vector<PodRef> kNoPods;

// A MIG-enabled GPU lists the processes of its instances too: those name the
// instances, not the whole GPU.
bool ProcessesNameDevice(const GpuInfo& device) { return !device.mig_enabled || device.is_mig(); }

// The pods the kubelet granted `device`.
const std::vector<PodRef>& GrantedPods(const Evidence& evidence, const GpuInfo& device) {
  const auto it = evidence.pods.find(Attribution::DeviceKey(device));
  return it == evidence.pods.end() ? kNoPods : it->second;
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
std::map<unsigned, Holder> ProcessHolders(const Evidence& evidence, const Inputs& inputs) {
  const auto* cri = evidence.containers ? &*evidence.containers : nullptr;
  std::map<unsigned, Holder> out;
  for (const GpuInfo& device : inputs.devices) {
    // A MIG parent's grant says nothing of a process on one of its instances.
    const std::vector<PodRef>& granted =
        ProcessesNameDevice(device) ? GrantedPods(evidence, device) : kNoPods;
    for (const DeviceProcess& p : inputs.On(device)) {
      if (out.contains(p.pid) && !out[p.pid].pod.empty()) continue;
      Holder h;
      const auto owner = evidence.owners.find(p.pid);
      if (owner != evidence.owners.end()) {
        if (auto pod = PodOfProcess(owner->second, granted, cri)) {
          h.namespace_name = pod->namespace_name;
          h.pod = pod->pod;
          h.container = pod->container;
        }
        h.hpc_job = owner->second.slurm_job;
      }
      h.workload = WorkloadName(h.pod, "", h.hpc_job, evidence.process_names ? p.name : "");
      if (!h.workload.empty()) out[p.pid] = std::move(h);
    }
  }
  return out;
}

// Pods named through the CRI by a device's processes, for a device the
// kubelet gave none (the kubelet off or down, or a GPU used outside the
// device plugin).
std::vector<PodRef> PodsOfProcesses(const GpuInfo& device, const Inputs& inputs,
                                    const std::map<unsigned, Holder>& holders) {
  std::vector<PodRef> out;
  if (!ProcessesNameDevice(device)) return out;
  for (const DeviceProcess& p : inputs.On(device)) {
    const auto h = holders.find(p.pid);
    if (h == holders.end() || h->second.pod.empty()) continue;
    PodRef ref{h->second.namespace_name, h->second.pod, h->second.container};
    if (std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(std::move(ref));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A vGPU host board no pod or job holds is held by the VMs its virtual GPUs
// serve: the VM is the workload (a pod or job inside the VM is the guest's
// own agent's to see).
std::vector<Holder> HeldByVms(const std::string& key, const Inputs& inputs) {
  std::vector<Holder> out;
  if (!inputs.vms) return out;
  const auto it = inputs.vms->find(key);
  if (it == inputs.vms->end()) return out;
  for (const std::string& vm : it->second) {
    Holder h;
    h.workload = vm;
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// With names opted in, a device no pod or job holds is held by the workloads
// its processes name.
std::vector<Holder> NamedByProcesses(const GpuInfo& device, const Inputs& inputs) {
  std::vector<Holder> out;
  if (!ProcessesNameDevice(device)) return out;
  for (const DeviceProcess& p : inputs.On(device)) {
    if (p.name.empty()) continue;
    Holder h;
    h.workload = WorkloadName("", "", "", p.name);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

using JobsByDevice = std::map<std::string, std::vector<std::string>>;
using Boards = std::set<std::string>;  // "GPU 1 (GPU-...)": whole boards, sorted

// The board of each device key: a MIG instance's is its parent GPU, so a job
// mapped to a GPU and running on one of its instances agrees.
std::map<std::string, std::string> BoardOfKey(const Inputs& inputs) {
  std::map<std::string, std::string> out;
  for (const GpuInfo& device : inputs.devices) {
    out[Attribution::DeviceKey(device)] =
        "GPU " + std::to_string(device.index) + " (" + device.uuid + ")";
  }
  return out;
}

// Job id -> the boards that `jobs` lists it on.
std::map<std::string, Boards> BoardsOfJobs(const JobsByDevice& jobs,
                                           const std::map<std::string, std::string>& board_of) {
  std::map<std::string, Boards> out;
  for (const auto& [key, ids] : jobs) {
    const auto board = board_of.find(key);
    if (board == board_of.end()) continue;
    for (const std::string& id : ids) out[id].insert(board->second);
  }
  return out;
}

std::string Join(const Boards& boards) {
  std::string out;
  for (const std::string& b : boards) out += (out.empty() ? "" : ", ") + b;
  return out;
}

// The Slurm jobs of each device: the mapping directory's, then its processes'
// cgroups'. A job whose processes run on a board the directory does not give
// it (a prolog that numbered GPUs otherwise than NVML, a stale file) keeps
// only the boards of its processes: the cgroups win, and the disagreement is
// a conflict. A job mapped to more boards than it runs on agrees (a GPU it
// holds but has not used yet).
JobsByDevice DeviceJobs(const Evidence& evidence, const Inputs& inputs,
                        std::vector<AttributionConflict>& conflicts) {
  const std::map<std::string, std::string> board_of = BoardOfKey(inputs);
  const std::map<std::string, Boards> mapped = BoardsOfJobs(evidence.jobs, board_of);
  const std::map<std::string, Boards> found = BoardsOfJobs(evidence.process_jobs, board_of);
  std::set<std::string> overruled;
  for (const auto& [job, boards] : found) {
    const auto named = mapped.find(job);
    if (named == mapped.end() ||
        std::includes(named->second.begin(), named->second.end(), boards.begin(), boards.end())) {
      continue;
    }
    overruled.insert(job);
    conflicts.push_back({"hpc", job, Join(named->second), Join(boards)});
  }
  JobsByDevice out;
  for (const auto& [key, ids] : evidence.jobs) {
    for (const std::string& id : ids) {
      if (!overruled.contains(id)) out[key].push_back(id);
    }
  }
  for (const auto& [key, ids] : evidence.process_jobs) {
    std::vector<std::string>& mine = out[key];
    for (const std::string& id : ids) {
      if (std::find(mine.begin(), mine.end(), id) == mine.end()) mine.push_back(id);
    }
  }
  std::sort(conflicts.begin(), conflicts.end());
  return out;
}

}  // namespace

Attribution Resolve(const Evidence& evidence, const Inputs& inputs) {
  Attribution out;
  out.processes = ProcessHolders(evidence, inputs);
  const JobsByDevice jobs = DeviceJobs(evidence, inputs, out.conflicts);
  for (const GpuInfo& device : inputs.devices) {
    const std::string key = Attribution::DeviceKey(device);
    std::vector<PodRef> pods = GrantedPods(evidence, device);
    if (pods.empty() && evidence.containers) pods = PodsOfProcesses(device, inputs, out.processes);
    const auto job = jobs.find(key);
    std::vector<Holder> holders = Combine(pods, job == jobs.end() ? nullptr : &job->second);
    if (holders.empty()) holders = HeldByVms(key, inputs);
    if (holders.empty() && evidence.process_names) holders = NamedByProcesses(device, inputs);
    if (!holders.empty()) out.holders[key] = std::move(holders);
  }
  return out;
}

}  // namespace gpuscope::attribution
