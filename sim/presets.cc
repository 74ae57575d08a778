#include "presets.h"

#include <array>

#include "nvml/abi.h"

namespace gpuscope::sim {
namespace {

namespace n = gpuscope::nvml;

// Sizes of the real H100/A100 80GB instances where known, else scaled.
constexpr MigProfile kMig80gbHopper[] = {
    {"1g.10gb", 1, 9984, 16, 7},  {"1g.20gb", 1, 19968, 16, 4}, {"2g.20gb", 2, 20096, 32, 3},
    {"3g.40gb", 3, 40448, 60, 2}, {"4g.40gb", 4, 40448, 64, 1}, {"7g.80gb", 7, 80896, 132, 1},
};
constexpr MigProfile kMig80gbAmpere[] = {
    {"1g.10gb", 1, 9984, 14, 7},  {"1g.20gb", 1, 19968, 14, 4}, {"2g.20gb", 2, 20096, 28, 3},
    {"3g.40gb", 3, 40448, 42, 2}, {"4g.40gb", 4, 40448, 56, 1}, {"7g.80gb", 7, 80896, 98, 1},
};
constexpr MigProfile kMigH200[] = {
    {"1g.18gb", 1, 17920, 16, 7}, {"1g.35gb", 1, 35584, 16, 4}, {"2g.35gb", 2, 35584, 32, 3},
    {"3g.71gb", 3, 71424, 60, 2}, {"4g.71gb", 4, 71424, 64, 1}, {"7g.141gb", 7, 142848, 132, 1},
};
constexpr MigProfile kMigB200[] = {
    {"1g.23gb", 1, 23296, 18, 7}, {"1g.45gb", 1, 45568, 18, 4}, {"2g.45gb", 2, 45568, 36, 3},
    {"3g.90gb", 3, 90624, 70, 2}, {"4g.90gb", 4, 90624, 74, 1}, {"7g.180gb", 7, 181248, 148, 1},
};

// clang-format off
const std::array<Preset, 7> kPresets = {{
    {.key = "h100-sxm", .name = "NVIDIA H100 80GB HBM3",
     .brand = n::kBrandNvidia, .vbios = "96.00.99.00.01",
     .architecture = n::kArchHopper, .cc_major = 9, .cc_minor = 0,
     .pci_device_id = 0x233010DE, .pci_subsystem_id = 0x16C110DE,
     .memory_total_mib = 81559, .memory_reserved_mib = 479, .memory_type = "HBM3",
     .power_default_w = 700, .power_min_w = 200, .power_max_w = 700,
     .max_sm_clock = 1980, .max_mem_clock = 2619, .idle_sm_clock = 345, .idle_mem_clock = 2619,
     .idle_pstate = 0,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 87, .temp_mem_max = 95,
     .pcie_gen = 5, .pcie_width = 16, .nvlink_links = 18, .nvlink_gbps_per_link = 26.562,
     .sm_count = 132,
     .gpm = true, .ecc = true, .remaps_rows = true,
     .idle_power_w = 70, .idle_temp_c = 35, .full_power_w = 630, .full_temp_c = 65,
     .peak_power_w = 760,
     .mig_profiles = kMig80gbHopper},
    {.key = "h200", .name = "NVIDIA H200",
     .brand = n::kBrandNvidia, .vbios = "96.00.A5.00.01",
     .architecture = n::kArchHopper, .cc_major = 9, .cc_minor = 0,
     .pci_device_id = 0x233510DE, .pci_subsystem_id = 0x18BE10DE,
     .memory_total_mib = 143771, .memory_reserved_mib = 614, .memory_type = "HBM3e",
     .power_default_w = 700, .power_min_w = 200, .power_max_w = 700,
     .max_sm_clock = 1980, .max_mem_clock = 3201, .idle_sm_clock = 345, .idle_mem_clock = 3201,
     .idle_pstate = 0,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 87, .temp_mem_max = 95,
     .pcie_gen = 5, .pcie_width = 16, .nvlink_links = 18, .nvlink_gbps_per_link = 26.562,
     .sm_count = 132,
     .gpm = true, .ecc = true, .remaps_rows = true,
     .idle_power_w = 75, .idle_temp_c = 28, .full_power_w = 630, .full_temp_c = 54,
     .peak_power_w = 760,
     .mig_profiles = kMigH200},
    {.key = "a100-sxm", .name = "NVIDIA A100-SXM4-80GB",
     .brand = n::kBrandTesla, .vbios = "92.00.45.00.06",
     .architecture = n::kArchAmpere, .cc_major = 8, .cc_minor = 0,
     .pci_device_id = 0x20B210DE, .pci_subsystem_id = 0x147E10DE,
     .memory_total_mib = 81920, .memory_reserved_mib = 763, .memory_type = "HBM2e",
     .power_default_w = 400, .power_min_w = 100, .power_max_w = 400,
     .max_sm_clock = 1410, .max_mem_clock = 1593, .idle_sm_clock = 210, .idle_mem_clock = 1593,
     .idle_pstate = 0,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 85, .temp_mem_max = 95,
     .pcie_gen = 4, .pcie_width = 16, .nvlink_links = 12, .nvlink_gbps_per_link = 25.0,
     .sm_count = 108,
     .gpm = false, .ecc = true, .remaps_rows = true,
     .idle_power_w = 60, .idle_temp_c = 24, .full_power_w = 380, .full_temp_c = 66,
     .peak_power_w = 440,
     .mig_profiles = kMig80gbAmpere},
    {.key = "l4", .name = "NVIDIA L4",
     .brand = n::kBrandNvidia, .vbios = "95.04.29.00.06",
     .architecture = n::kArchAda, .cc_major = 8, .cc_minor = 9,
     .pci_device_id = 0x27B810DE, .pci_subsystem_id = 0x16CA10DE,
     .memory_total_mib = 23034, .memory_reserved_mib = 556, .memory_type = "GDDR6",
     .power_default_w = 72, .power_min_w = 40, .power_max_w = 72,
     .max_sm_clock = 2040, .max_mem_clock = 6251, .idle_sm_clock = 210, .idle_mem_clock = 405,
     .idle_pstate = 8,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 87, .temp_mem_max = 0,
     .pcie_gen = 4, .pcie_width = 16, .nvlink_links = 0, .nvlink_gbps_per_link = 0.0,
     .sm_count = 58,
     .gpm = false, .ecc = false, .remaps_rows = true,
     .idle_power_w = 17, .idle_temp_c = 33, .full_power_w = 70, .full_temp_c = 72,
     .peak_power_w = 80,
     .mig_profiles = {}},
    {.key = "b200", .name = "NVIDIA B200",
     .brand = n::kBrandNvidia, .vbios = "97.00.5A.00.01",
     .architecture = n::kArchBlackwell, .cc_major = 10, .cc_minor = 0,
     .pci_device_id = 0x290110DE, .pci_subsystem_id = 0x199910DE,
     .memory_total_mib = 183359, .memory_reserved_mib = 728, .memory_type = "HBM3e",
     .power_default_w = 1000, .power_min_w = 200, .power_max_w = 1000,
     .max_sm_clock = 1965, .max_mem_clock = 3996, .idle_sm_clock = 120, .idle_mem_clock = 3996,
     .idle_pstate = 0,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 87, .temp_mem_max = 95,
     .pcie_gen = 5, .pcie_width = 16, .nvlink_links = 18, .nvlink_gbps_per_link = 53.125,
     .sm_count = 148,
     .gpm = true, .ecc = true, .remaps_rows = true,
     .idle_power_w = 170, .idle_temp_c = 35, .full_power_w = 950, .full_temp_c = 62,
     .peak_power_w = 1080,
     .mig_profiles = kMigB200},
    // Extra (not in gpu-models.md; no GB200 was at hand): one Blackwell GPU of a GB200
    // compute tray (Grace C2C, 4 GPUs a node, 18 NVLink 5 links into the NVL72 fabric).
    // B200's figures where NVIDIA publishes none for GB200; 1200 W board limit.
    {.key = "gb200", .name = "NVIDIA GB200",
     .brand = n::kBrandNvidia, .vbios = "97.00.82.00.01",
     .architecture = n::kArchBlackwell, .cc_major = 10, .cc_minor = 0,
     .pci_device_id = 0x294110DE, .pci_subsystem_id = 0x20CA10DE,
     .memory_total_mib = 189471, .memory_reserved_mib = 728, .memory_type = "HBM3e",
     .power_default_w = 1200, .power_min_w = 200, .power_max_w = 1200,
     .max_sm_clock = 2062, .max_mem_clock = 3996, .idle_sm_clock = 120, .idle_mem_clock = 3996,
     .idle_pstate = 0,
     .temp_shutdown = 92, .temp_slowdown = 89, .temp_gpu_max = 87, .temp_mem_max = 95,
     .pcie_gen = 5, .pcie_width = 16, .nvlink_links = 18, .nvlink_gbps_per_link = 53.125,
     .sm_count = 152,
     .gpm = true, .ecc = true, .remaps_rows = true,
     .idle_power_w = 180, .idle_temp_c = 33, .full_power_w = 1130, .full_temp_c = 60,
     .peak_power_w = 1300,
     .mig_profiles = kMigB200, .fabric = true},
    // Extra (not in gpu-models.md): a pre-Ampere board, for page retirement.
    {.key = "v100-sxm2", .name = "Tesla V100-SXM2-32GB",
     .brand = n::kBrandTesla, .vbios = "88.00.80.00.01",
     .architecture = n::kArchVolta, .cc_major = 7, .cc_minor = 0,
     .pci_device_id = 0x1DB510DE, .pci_subsystem_id = 0x124910DE,
     .memory_total_mib = 32768, .memory_reserved_mib = 258, .memory_type = "HBM2",
     .power_default_w = 300, .power_min_w = 150, .power_max_w = 300,
     .max_sm_clock = 1530, .max_mem_clock = 877, .idle_sm_clock = 135, .idle_mem_clock = 877,
     .idle_pstate = 0,
     .temp_shutdown = 90, .temp_slowdown = 87, .temp_gpu_max = 83, .temp_mem_max = 95,
     .pcie_gen = 3, .pcie_width = 16, .nvlink_links = 6, .nvlink_gbps_per_link = 25.0,
     .sm_count = 80,
     .gpm = false, .ecc = true, .remaps_rows = false,
     .idle_power_w = 40, .idle_temp_c = 33, .full_power_w = 290, .full_temp_c = 68,
     .peak_power_w = 330,
     .mig_profiles = {}},
}};
// clang-format on

}  // namespace

const Preset* FindPreset(std::string_view key) {
  for (const Preset& p : kPresets) {
    if (key == p.key) return &p;
  }
  return nullptr;
}

std::string PresetKeyList() {
  std::string out;
  for (const Preset& p : kPresets) {
    if (!out.empty()) out += ", ";
    out += p.key;
  }
  return out;
}

const MigProfile* FindMigProfile(const Preset& preset, std::string_view name) {
  for (const MigProfile& m : preset.mig_profiles) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

}  // namespace gpuscope::sim
