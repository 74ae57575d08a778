#include "cli/node.h"

#include <algorithm>
#include <cstdlib>

#include "analysis/report.h"
#include "base/log.h"
#include "cli/exit_codes.h"
#include "collect/sampler.h"
#include "nvml/library.h"

namespace gpuscope::cli {
namespace {

class NvmlNode : public Node {
 public:
  NvmlNode(std::unique_ptr<collect::Sampler> sampler, std::string scenario)
      : sampler_(std::move(sampler)), scenario_(std::move(scenario)) {
    std::shared_ptr<const nvml::Library> library = sampler_->library();
    simulated_ = !scenario_.empty() || (library && library->sim().present());
  }

  Result<SnapshotPtr> Sample() override {
    SnapshotPtr snapshot = sampler_->SampleOnce(/*all_tiers=*/true);
    if (!snapshot || !snapshot->nvml_up) {
      return NvmlUnavailable(snapshot && !snapshot->nvml_error.empty()
                                 ? snapshot->nvml_error
                                 : std::string("NVML stopped answering."));
    }
    return snapshot;
  }

  bool simulated() const override { return simulated_; }
  const std::string& scenario() const override { return scenario_; }

 private:
  std::unique_ptr<collect::Sampler> sampler_;
  std::string scenario_;
  bool simulated_ = false;
};

}  // namespace

Status LostGpus(const Snapshot& snapshot, const std::vector<std::size_t>& slots) {
  std::string sentences;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    const bool selected = slots.empty() || std::find(slots.begin(), slots.end(), i) != slots.end();
    if (!selected || snapshot.gpus[i].gpu_instance_id) continue;
    if (snapshot.samples[i].state != GpuState::kLost) continue;
    if (!sentences.empty()) sentences += "\n";
    sentences += analysis::LostSentence(snapshot.gpus[i], snapshot.samples[i]);
  }
  return sentences.empty() ? Status::Ok() : GpuLost(sentences);
}

Result<std::unique_ptr<Node>> Node::Open(const CommonOptions& options) {
  Result<std::string> path = PrepareNvml(options);
  if (!path.ok()) return path.status();
  // One-shot commands print only what was asked; warnings still reach stderr.
  log::SetLevel(log::Level::kWarn);
  collect::SamplerOptions sampler_options;
  sampler_options.nvml_path = *path;
  auto sampler = std::make_unique<collect::Sampler>(sampler_options);
  GPUSCOPE_RETURN_IF_ERROR(sampler->Open());
  std::string scenario = ScenarioName(options, [](const char* name) { return std::getenv(name); });
  return std::unique_ptr<Node>(new NvmlNode(std::move(sampler), std::move(scenario)));
}

}  // namespace gpuscope::cli
