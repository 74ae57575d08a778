// GPU model presets: the fixed facts of each simulated board (identity, limits,
// clocks, thermal figures, features), from shared/reference/gpu-models.md.
//
// Thread safety: the tables are immutable constants; share freely.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace gpuscope::sim {

// One MIG GPU-instance profile of a board ("3g.40gb").
struct MigProfile {
  const char* name;
  unsigned slices;      // gpuInstanceSliceCount
  unsigned memory_mib;  // instance memory
  unsigned sm_count;    // multiprocessors in the instance
  unsigned max_count;   // instances of this profile on one GPU
};

struct Preset {
  const char* key;   // scenario name, "h100-sxm"
  const char* name;  // nvmlDeviceGetName
  int brand;
  const char* vbios;
  unsigned architecture;
  int cc_major, cc_minor;
  unsigned pci_device_id;  // device id << 16 | 0x10DE
  unsigned pci_subsystem_id;
  unsigned long long memory_total_mib, memory_reserved_mib;
  const char* memory_type;
  unsigned power_default_w, power_min_w, power_max_w;
  unsigned max_sm_clock, max_mem_clock, idle_sm_clock, idle_mem_clock;  // MHz
  int idle_pstate;
  unsigned temp_shutdown, temp_slowdown, temp_gpu_max;
  unsigned temp_mem_max;  // 0: no memory temperature sensor
  unsigned pcie_gen, pcie_width;
  unsigned nvlink_links;        // 0: no NVLink
  double nvlink_gbps_per_link;  // GB/s per direction
  unsigned sm_count;
  bool gpm;          // GPM metrics (Hopper and newer)
  bool ecc;          // ECC enabled by default
  bool remaps_rows;  // Ampere+: row remapping; older: page retirement
  double idle_power_w, idle_temp_c;
  double full_power_w, full_temp_c;          // a sustained full load (gpu-burn)
  double peak_power_w;                       // demand at activity 1.0 (may exceed the limit)
  std::span<const MigProfile> mig_profiles;  // empty: no MIG
  bool fabric = false;  // joins an NVLink fabric (NVL72): nvmlDeviceGetGpuFabricInfoV answers
};

// The preset for a scenario key, or nullptr.
const Preset* FindPreset(std::string_view key);

// Every preset key, comma separated (for error messages).
std::string PresetKeyList();

// The MIG profile of a preset by name ("1g.10gb"), or nullptr.
const MigProfile* FindMigProfile(const Preset& preset, std::string_view name);

}  // namespace gpuscope::sim
