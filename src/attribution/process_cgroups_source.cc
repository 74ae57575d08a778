// The cgroup of each GPU process under --proc-root (cgroup.h): its container
// (named a pod by the CRI or an exclusive grant, resolve.h) and its Slurm job,
// which is a job of its device too on nodes without a mapping directory.
// Always on, and never down: a process that is gone or unreadable is only
// absent.
#include <algorithm>

#include "attribution/cgroup.h"
#include "attribution/source.h"

namespace gpuscope::attribution {
namespace {

class ProcessCgroupsSource final : public Source {
 public:
  explicit ProcessCgroupsSource(std::string proc_root) : proc_root_(std::move(proc_root)) {}

  std::string_view name() const override { return "cgroup"; }
  bool reports_up() const override { return false; }

  Result<Evidence> Read(const Inputs& inputs) const override {
    Evidence out;
    out.owners = ReadOwners(inputs.processes);
    AddJobs(inputs, out);
    return out;
  }

 private:
  // What the cgroup of each GPU process says (read once per refresh).
  std::map<unsigned, CgroupOwner> ReadOwners(const DeviceProcesses& processes) const {
    std::map<unsigned, CgroupOwner> out;
    for (const auto& [key, list] : processes) {
      for (const DeviceProcess& p : list) {
        if (out.contains(p.pid)) continue;
        Result<CgroupOwner> owner = ReadProcessCgroup(proc_root_, p.pid);
        if (owner.ok()) out.emplace(p.pid, std::move(*owner));
      }
    }
    return out;
  }

  // The Slurm jobs of each device's processes are jobs of that device.
  static void AddJobs(const Inputs& inputs, Evidence& out) {
    for (const GpuInfo& device : inputs.devices) {
      for (const DeviceProcess& p : inputs.On(device)) {
        const auto owner = out.owners.find(p.pid);
        if (owner == out.owners.end() || owner->second.slurm_job.empty()) continue;
        std::vector<std::string>& jobs = out.process_jobs[Attribution::DeviceKey(device)];
        if (std::find(jobs.begin(), jobs.end(), owner->second.slurm_job) == jobs.end()) {
          jobs.push_back(owner->second.slurm_job);
        }
      }
    }
  }

  const std::string proc_root_;
};

}  // namespace

std::unique_ptr<Source> MakeProcessCgroupsSource(const ServiceOptions& options) {
  return std::make_unique<ProcessCgroupsSource>(options.proc_root);
}

}  // namespace gpuscope::attribution
