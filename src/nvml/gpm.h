// nvml::GpmSampler: profiling-grade activity (SM active, occupancy, tensor,
// DRAM bandwidth, ...) from NVML's GPM API on Hopper and newer, for a GPU or a
// MIG device (sampled through the parent GPU and the GPU instance id).
//
// It owns two GPM sample buffers (allocated at Create, freed at destruction).
// Each Sample() overwrites the older buffer; Metrics() computes values over
// the interval between the two latest samples, which should be > 100 ms apart.
//
// Thread safety: one thread at a time per sampler (Sample mutates it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpuscope/status.h"
#include "nvml/abi.h"
#include "nvml/device.h"

namespace gpuscope::nvml {

class GpmSampler {
 public:
  // kNotSupported when the driver lacks GPM or the GPU does not support it.
  static Result<std::unique_ptr<GpmSampler>> Create(const Device& device);
  ~GpmSampler();
  GpmSampler(const GpmSampler&) = delete;
  GpmSampler& operator=(const GpmSampler&) = delete;

  // Takes a sample now.
  Status Sample();
  // Samples taken so far; Metrics needs two.
  int samples_taken() const { return taken_; }

  // The metrics (GPM metric ids: 1 graphics util, 2 SM util, 3 SM occupancy,
  // 5 any tensor, 10 DRAM bandwidth, ...) between the two latest samples, one
  // Result per id in order; an unknown id fails on its own entry.
  Result<std::vector<Result<double>>> Metrics(std::span<const uint32_t> metric_ids);

 private:
  explicit GpmSampler(const Device& device) : device_(device) {}

  Device device_;
  void* samples_[2] = {nullptr, nullptr};  // nvmlGpmSample_t
  int latest_ = 1;                         // index of the newest sample; the next goes to the other
  int taken_ = 0;
  // The request Metrics fills (~13 KB): allocated once, since a fresh one per
  // call cost malloc a consolidation pass every cycle for every GPU.
  std::unique_ptr<nvmlGpmMetricsGet_t> request_ = std::make_unique<nvmlGpmMetricsGet_t>();
};

}  // namespace gpuscope::nvml
