// dcgm-exporter's HPC job-mapping directory (--hpc-job-mapping-dir,
// hpc_jobs.h): the Slurm jobs of each GPU, by its NVML index.
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
    for (const GpuInfo& device : inputs.devices) {
      const auto file = files->find(device.index);
      if (file != files->end()) out.jobs[Attribution::DeviceKey(device)] = file->second;
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
