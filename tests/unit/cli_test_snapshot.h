// Hand-built snapshots for the CLI tests: two H100-like GPUs with known
// values, the second missing a few metrics.
#pragma once

#include "gpuscope/snapshot.h"

namespace gpuscope::cli::testing {

inline Snapshot TwoGpuSnapshot() {
  Snapshot snap;
  snap.timestamp = 1714566896.789;  // 2024-05-01 12:34:56.789 UTC
  snap.nvml_up = true;
  snap.system = {"570.133.20", "12.570.133.20", "12.8", "node-a"};
  for (unsigned i = 0; i < 2; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.uuid = "GPU-0000000" + std::to_string(i) + "-1111-2222-3333-444444444444";
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.serial = "165412345678" + std::to_string(i);
    gpu.pci_bus_id = i == 0 ? "00000000:18:00.0" : "00000000:2A:00.0";
    gpu.pci_bus = i == 0 ? 0x18 : 0x2A;
    gpu.pci_device_id = 0x233010DE;
    gpu.pci_sub_system_id = 0x16C110DE;
    gpu.compute_capability = "9.0";
    gpu.vbios_version = "96.00.99.00.01";
    gpu.persistence_mode = "Enabled";
    gpu.compute_mode = "Default";
    snap.gpus.push_back(gpu);
    GpuSample s;
    s.sampled_at = snap.timestamp;
    s.Set(Metric::kGpuUtil, i == 0 ? 45 : 100);
    s.Set(Metric::kMemoryUsed, 1234.0 * 1048576 + 1000);  // floors to 1234 MiB
    s.Set(Metric::kMemoryTotal, 81559.0 * 1048576);
    s.Set(Metric::kGpuTemp, i == 0 ? 56 : 71);
    s.Set(Metric::kGpuMaxTemp, 87);
    s.Set(Metric::kPowerUsage, i == 0 ? 123.454 : 700);
    s.Set(Metric::kPowerLimit, 700);
    s.Set(Metric::kPState, 0);
    s.Set(Metric::kClockReasons, 0x4);
    s.Set(Metric::kClockReasonsSupported, 0x1FF);
    s.Set(Metric::kSmClock, 1980);
    s.Set(Metric::kEccMode, 1);
    s.Set(Metric::kRemappedPending, 0);
    s.Set(Metric::kPowerViolation, 2500000);  // ns -> 2500 us
    if (i == 1) {
      s.Clear(Metric::kGpuTemp);
      s.Clear(Metric::kPowerUsage);
    }
    if (i == 0) s.processes.push_back({4242, "python3", 1024ull * 1048576, {}, {}});
    if (i == 1) s.processes.push_back({4343, "torchrun", std::nullopt, {}, {}});
    snap.samples.push_back(s);
  }
  return snap;
}

}  // namespace gpuscope::cli::testing
