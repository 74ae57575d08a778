// Device inventory: opens every GPU through nvml::Library and describes it
// once (GpuInfo: identity, modes, NVLink count, GPM support, MIG instances as
// extra entries that carry the parent's index and UUID plus their own
// instance ids, MIG UUID and profile name). Also the driver-wide SystemInfo.
//
// Identity calls that fail leave their field empty (or absent) rather than
// failing the whole inventory; only enumeration errors fail it.
// Thread safety: free functions; the Library is only read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "nvml/device.h"
#include "nvml/library.h"

namespace gpuscope::collect {

// One GPU or MIG instance and its NVML handle. A GPU that failed to open
// (e.g. lost at start) has no handle, only its index, and `error`.
struct DeviceEntry {
  GpuInfo info;
  std::optional<nvml::Device> device;
  Status error;
};

// Driver, NVML and CUDA versions (from the Library) and the host name.
SystemInfo ReadSystemInfo(const nvml::Library& library);

// Every GPU in NVML index order, each followed by its MIG instances. Fails
// only when the GPUs cannot be counted.
Result<std::vector<DeviceEntry>> DiscoverDevices(const nvml::Library& library);

// Describes one whole GPU.
GpuInfo DescribeGpu(const nvml::Device& device);

// "Hopper" from NVML's architecture number; "Unknown" for others.
std::string ArchitectureName(uint32_t architecture);
// "Tesla", "NVIDIA", "GeForce" ... from NVML's brand number.
std::string BrandName(int brand);
// nvidia-smi's compute mode text: "Default", "Exclusive_Process", ...
std::string ComputeModeName(int mode);
// "1g.10gb": slices, and the instance's share of the board in eighths times
// the board's nominal size (GiB rounded up), rounded half up.
std::string MigProfileName(uint32_t slices, uint64_t instance_mib, uint64_t parent_total_mib);

}  // namespace gpuscope::collect
