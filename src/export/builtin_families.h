// Names, help and labels of the native families the Renderer derives from a
// Snapshot beyond the catalog rows; shared by the renderer and the metrics
// documentation. Thread safety: constexpr data.
#pragma once

#include <array>
#include <string_view>

#include "export/family.h"

namespace gpuscope::prom {

struct BuiltinFamily {
  std::string_view name;
  std::string_view help;
  FamilyType type;
  std::string_view labels;  // for the documentation, after the native GPU labels
};

inline constexpr BuiltinFamily kGpuInfo{
    "gpuscope_gpu_info", "GPU identity; the value is always 1.", FamilyType::kInfo,
    "name, pci_bus_id, minor_number, brand, serial, vbios_version, architecture, "
    "compute_capability, driver_version, cuda_version, hostname"};
inline constexpr BuiltinFamily kGpuLost{
    "gpuscope_gpu_lost", "1 when the GPU fell off the bus or stopped answering (GPU_IS_LOST).",
    FamilyType::kGauge, ""};
inline constexpr BuiltinFamily kLastSample{"gpuscope_gpu_last_sample_timestamp_seconds",
                                           "Unix time of the last successful read of the GPU.",
                                           FamilyType::kGauge, ""};
inline constexpr BuiltinFamily kLinkActive{
    "gpuscope_nvlink_link_active", "1 when the NVLink link is up.", FamilyType::kGauge, "link"};
inline constexpr BuiltinFamily kLinkErrors{"gpuscope_nvlink_link_errors_total",
                                           "NVLink errors per link, by type.", FamilyType::kCounter,
                                           "link, type (crc_data, crc_flit, recovery, replay)"};
inline constexpr BuiltinFamily kXidErrors{
    "gpuscope_xid_errors_total",
    "XID errors reported by the driver since gpuscope started, by code.", FamilyType::kCounter,
    "xid"};

// In the order the Renderer writes them (first three before the catalog rows).
// Staleness is not here: the health module renders gpuscope_collector_stale.
inline constexpr std::array<const BuiltinFamily*, 3> kLeadingBuiltins = {&kGpuInfo, &kGpuLost,
                                                                         &kLastSample};
inline constexpr std::array<const BuiltinFamily*, 3> kTrailingBuiltins = {
    &kLinkActive, &kLinkErrors, &kXidErrors};

}  // namespace gpuscope::prom
