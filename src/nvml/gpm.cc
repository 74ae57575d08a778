#include "nvml/gpm.h"

#include <cstring>

#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

nvmlGpmSample_t AsSample(void* p) { return static_cast<nvmlGpmSample_t>(p); }

}  // namespace

Result<std::unique_ptr<GpmSampler>> GpmSampler::Create(const Device& device) {
  auto supported = device.GpmSupported();
  if (!supported.ok()) return supported.status();
  if (!*supported) {
    return Status::NotSupported("GPM (" + device.label() + "): not supported by this GPU");
  }
  std::unique_ptr<GpmSampler> sampler(new GpmSampler(device));
  const Library& lib = *device.lib_;
  for (void*& slot : sampler->samples_) {
    nvmlGpmSample_t sample = nullptr;
    GPUSCOPE_RETURN_IF_ERROR(lib.Check(Invoke(lib.api(), &Api::nvmlGpmSampleAlloc, &sample),
                                       "nvmlGpmSampleAlloc", device.label()));
    slot = sample;
  }
  return sampler;
}

GpmSampler::~GpmSampler() {
  for (void* sample : samples_) {
    if (sample != nullptr) Invoke(device_.lib_->api(), &Api::nvmlGpmSampleFree, AsSample(sample));
  }
}

Status GpmSampler::Sample() {
  const int next = 1 - latest_;
  Status status;
  if (device_.is_mig()) {
    const Device parent = device_.Parent();
    status = parent.Call(GPUSCOPE_NVML_FN(nvmlGpmMigSampleGet), *device_.gpu_instance_id(),
                         AsSample(samples_[next]));
  } else {
    status = device_.Call(GPUSCOPE_NVML_FN(nvmlGpmSampleGet), AsSample(samples_[next]));
  }
  if (!status.ok()) return status;
  latest_ = next;
  ++taken_;
  return Status::Ok();
}

Result<std::vector<Result<double>>> GpmSampler::Metrics(std::span<const uint32_t> metric_ids) {
  if (taken_ < 2) {
    return Status::Unavailable("GPM (" + device_.label() + "): two samples needed, " +
                               std::to_string(taken_) + " taken");
  }
  if (metric_ids.size() > kNvmlGpmMetricsMax) {
    return Status::InvalidArgument("GPM: at most " + std::to_string(kNvmlGpmMetricsMax) +
                                   " metrics per call");
  }
  // Sized for the largest driver table whatever numMetrics says; cleared
  // so no value of the last call is read back.
  nvmlGpmMetricsGet_t* get = request_.get();
  std::memset(get, 0, sizeof(*get));
  get->version = kGpmMetricsGetVersion;
  get->numMetrics = static_cast<unsigned>(metric_ids.size());
  get->sample1 = AsSample(samples_[1 - latest_]);
  get->sample2 = AsSample(samples_[latest_]);
  for (std::size_t i = 0; i < metric_ids.size(); ++i) get->metrics[i].metricId = metric_ids[i];
  const Library& lib = *device_.lib_;
  GPUSCOPE_RETURN_IF_ERROR(lib.Check(Invoke(lib.api(), &Api::nvmlGpmMetricsGet, get),
                                     "nvmlGpmMetricsGet", device_.label()));
  std::vector<Result<double>> values;
  values.reserve(metric_ids.size());
  for (std::size_t i = 0; i < metric_ids.size(); ++i) {
    const nvmlGpmMetric_t& m = get->metrics[i];
    if (m.nvmlReturn == kSuccess) {
      values.push_back(m.value);
    } else {
      const std::string call = "nvmlGpmMetricsGet metric " + std::to_string(metric_ids[i]);
      values.push_back(lib.Check(m.nvmlReturn, call.c_str(), device_.label()));
    }
  }
  return values;
}

}  // namespace gpuscope::nvml
