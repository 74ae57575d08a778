// Hand-built snapshots for the exporter tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "export/render.h"
#include "gpuscope/snapshot.h"
#include "test_paths.h"

namespace gpuscope::prom::testing {

inline GpuInfo MakeGpu(unsigned index, std::string uuid, std::string name) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.uuid = std::move(uuid);
  gpu.name = std::move(name);
  gpu.serial = "132" + std::to_string(index);
  gpu.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  gpu.minor_number = index;
  gpu.architecture = "Hopper";
  gpu.compute_capability = "9.0";
  gpu.vbios_version = "96.00.99.00.01";
  gpu.brand = "Tesla";
  return gpu;
}

inline SystemInfo MakeSystem() { return {"570.133.20", "12.570.133.20", "12.8", "node-1"}; }

// Every catalog metric present, 8 GPUs, NVLink and XIDs: the largest body.
inline Snapshot FullSnapshot(unsigned gpus = 8) {
  Snapshot snapshot;
  snapshot.sequence = 7;
  snapshot.nvml_up = true;
  snapshot.system = MakeSystem();
  for (unsigned i = 0; i < gpus; ++i) {
    snapshot.gpus.push_back(
        MakeGpu(i, "GPU-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-dddddddddddd",
                "NVIDIA H100 80GB HBM3"));
    GpuSample sample;
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      // Integer readings, as NVML gives them; scales make ratios and joules.
      sample.Set(static_cast<Metric>(m), static_cast<double>(m * 37 + i));
    }
    sample.sampled_at = 1700000000.25;
    for (unsigned l = 0; l < 18; ++l) {
      sample.nvlink.push_back({l, true, l, 0, 2 * l, 0});
    }
    sample.xid_counts = {{13, 2}, {79, 1}};
    snapshot.samples.push_back(std::move(sample));
  }
  return snapshot;
}

// Every catalog dcgm name served, plus two label fields.
inline RenderOptions AllCounters(MetricSet metrics) {
  RenderOptions options;
  options.metrics = metrics;
  options.profile = Profile::kFull;
  std::string csv =
      "DCGM_FI_DRIVER_VERSION, label, Driver Version\n"
      "DCGM_FI_DEV_SERIAL, label, Serial\n";
  for (const MetricDef& def : kCatalog) {
    if (def.dcgm.name.empty()) continue;
    // No space before the quote: Go's CSV reader (dcgm-exporter's) refuses it.
    csv += std::string(def.dcgm.name) +
           (def.dcgm.type == MetricType::kCounter ? ",counter,\"" : ",gauge,\"") +
           std::string(def.help) + "\"\n";
  }
  Result<CounterSet> set = ParseCounters(csv, "all.csv");
  EXPECT_TRUE(set.ok()) << set.status().message();
  if (set.ok()) options.counters = std::move(set).value();
  return options;
}

// The lines of `body` that start with `prefix`, in order.
inline std::vector<std::string> Lines(const std::string& body, std::string_view prefix) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares with a file under the source tree; GPUSCOPE_UPDATE_GOLDEN=1
// rewrites it instead.
inline std::string Golden(const std::string& relative, const std::string& actual) {
  std::string path = test_support::SourceDir() + "/" + relative;
  if (const char* update = std::getenv("GPUSCOPE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << actual;
  }
  return ReadFile(path);
}

}  // namespace gpuscope::prom::testing
