// dcgm-exporter's HPC job-mapping directory (--hpc-job-mapping-dir,
// hpc_jobs.h): the Slurm jobs of each GPU, by its NVML index, its device
// file's minor number or its UUID.
#include <algorithm>

#include "attribution/hpc_jobs.h"
#include "attribution/source.h"

namespace gpuscope::attribution {
namespace {

class HpcJobDirSource final : public Source {
 public:
  explicit HpcJobDirSource(std::string dir) : dir_(std::move(dir)) {}

  std::string_view name() const override { return "hpc"; }
  std::string_view not_yet() const override { return "not read yet"; }

  Result<Evidence> Read(const Inputs& inputs) const override {
    const Result<HpcJobMap> files = ReadHpcJobDir(dir_);
    if (!files.ok()) return files.status();
    Evidence out;
    for (const auto& [file, ids] : *files) {
      const std::optional<HpcGpuName> gpu = ParseHpcGpuName(file);
      for (const GpuInfo& device : inputs.devices) {
        if (!gpu || !gpu->Names(device)) continue;
        // Two files may name one GPU ("0" and "nvidia0"): their jobs join.
        std::vector<std::string>& jobs = out.jobs[Attribution::DeviceKey(device)];
        for (const std::string& id : ids) {
          if (std::find(jobs.begin(), jobs.end(), id) == jobs.end()) jobs.push_back(id);
        }
      }
    }
    return out;
  }

 private:
  const std::string dir_;
};

}  // namespace

std::unique_ptr<Source> MakeHpcJobDirSource(const ServiceOptions& options) {
  if (options.hpc_job_dir.empty()) return nullptr;
  return std::make_unique<HpcJobDirSource>(options.hpc_job_dir);
}

}  // namespace gpuscope::attribution
