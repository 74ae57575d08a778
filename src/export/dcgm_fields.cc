#include "export/dcgm_fields.h"

#include <array>
#include <charconv>

namespace gpuscope::prom {
namespace {

struct LabelFieldName {
  std::string_view name;
  LabelField field;
};
constexpr std::array<LabelFieldName, 14> kLabelFields = {{
    {"DCGM_FI_DRIVER_VERSION", LabelField::kDriverVersion},
    {"DCGM_FI_NVML_VERSION", LabelField::kNvmlVersion},
    {"DCGM_FI_DEV_BRAND", LabelField::kBrand},
    {"DCGM_FI_DEV_SERIAL", LabelField::kSerial},
    {"DCGM_FI_DEV_VBIOS_VERSION", LabelField::kVbiosVersion},
    {"DCGM_FI_DEV_NAME", LabelField::kName},
    {"DCGM_FI_DEV_UUID", LabelField::kUuid},
    {"DCGM_FI_DEV_PCI_BUSID", LabelField::kPciBusId},
    {"DCGM_FI_DEV_MINOR_NUMBER", LabelField::kMinorNumber},
    {"DCGM_FI_DEV_INFOROM_IMAGE_VER", LabelField::kInforomImage},
    {"DCGM_FI_DEV_OEM_INFOROM_VER", LabelField::kInforomOem},
    {"DCGM_FI_DEV_ECC_INFOROM_VER", LabelField::kInforomEcc},
    {"DCGM_FI_DEV_POWER_INFOROM_VER", LabelField::kInforomPower},
    {"DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY", LabelField::kCudaComputeCapability},
}};

// DCGM's compute capability value: the major version in the upper 32 bits,
// the minor in the lower ("9.0" -> 38654705664); "" when unknown.
std::string ComputeCapabilityValue(const std::string& text) {
  unsigned long long major = 0, minor = 0;
  const char* end = text.data() + text.size();
  auto [dot, ec] = std::from_chars(text.data(), end, major);
  if (ec != std::errc() || dot == end || *dot != '.') return "";
  auto [last, ec2] = std::from_chars(dot + 1, end, minor);
  if (ec2 != std::errc() || last != end) return "";
  return std::to_string(major << 32 | minor);
}

// DCGM_EXP_CLOCK_EVENTS_COUNT is not among them: nothing renders it yet, so a
// file naming it gets a warning rather than a family that never appears.
constexpr std::array<std::string_view, 2> kServedExporterFields = {
    "DCGM_EXP_XID_ERRORS_COUNT",
    "DCGM_EXP_GPU_HEALTH_STATUS",
};
// Every name dcgm-exporter's own counters know (counters/const.go).
constexpr std::array<std::string_view, 4> kExporterFields = {
    "DCGM_EXP_XID_ERRORS_COUNT",
    "DCGM_EXP_CLOCK_EVENTS_COUNT",
};

// go-dcgm's legacy names (dcgm-exporter 1.x files, etc/1.x-compatibility-
// metrics.csv), with the field each stands for.
struct LegacyName {
  std::string_view legacy, current;
};
constexpr LegacyName kLegacyNames[] = {
    {"dcgm_board_limit_violation", "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION"},
    {"dcgm_dec_utilization", "DCGM_FI_DEV_DEC_UTIL"},
    {"dcgm_ecc_dbe_aggregate_total", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"},
    {"dcgm_ecc_dbe_volatile_total", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"},
    {"dcgm_ecc_sbe_aggregate_total", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"},
    {"dcgm_ecc_sbe_volatile_total", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"},
    {"dcgm_enc_utilization", "DCGM_FI_DEV_ENC_UTIL"},
    {"dcgm_fb_free", "DCGM_FI_DEV_FB_FREE"},
    {"dcgm_fb_used", "DCGM_FI_DEV_FB_USED"},
    {"dcgm_fi_prof_dram_active", "DCGM_FI_PROF_DRAM_ACTIVE"},
    {"dcgm_fi_prof_gr_engine_active", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"},
    {"dcgm_fi_prof_pcie_rx_bytes", "DCGM_FI_PROF_PCIE_RX_BYTES"},
    {"dcgm_fi_prof_pcie_tx_bytes", "DCGM_FI_PROF_PCIE_TX_BYTES"},
    {"dcgm_fi_prof_pipe_tensor_active", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"},
    {"dcgm_fi_prof_sm_active", "DCGM_FI_PROF_SM_ACTIVE"},
    {"dcgm_fi_prof_sm_occupancy", "DCGM_FI_PROF_SM_OCCUPANCY"},
    {"dcgm_gpu_temp", "DCGM_FI_DEV_GPU_TEMP"},
    {"dcgm_gpu_utilization", "DCGM_FI_DEV_GPU_UTIL"},
    {"dcgm_low_util_violation", "DCGM_FI_DEV_LOW_UTIL_VIOLATION"},
    {"dcgm_mem_copy_utilization", "DCGM_FI_DEV_MEM_COPY_UTIL"},
    {"dcgm_memory_clock", "DCGM_FI_DEV_MEM_CLOCK"},
    {"dcgm_memory_temp", "DCGM_FI_DEV_MEMORY_TEMP"},
    {"dcgm_nvlink_bandwidth_total", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"},
    {"dcgm_nvlink_data_crc_error_count_total", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"},
    {"dcgm_nvlink_flit_crc_error_count_total", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"},
    {"dcgm_nvlink_recovery_error_count_total", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"},
    {"dcgm_nvlink_replay_error_count_total", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"},
    {"dcgm_pcie_replay_counter", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"},
    {"dcgm_pcie_rx_throughput", "DCGM_FI_DEV_PCIE_RX_THROUGHPUT"},
    {"dcgm_pcie_tx_throughput", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT"},
    {"dcgm_power_usage", "DCGM_FI_DEV_POWER_USAGE"},
    {"dcgm_power_violation", "DCGM_FI_DEV_POWER_VIOLATION"},
    {"dcgm_reliability_violation", "DCGM_FI_DEV_RELIABILITY_VIOLATION"},
    {"dcgm_retired_pages_dbe", "DCGM_FI_DEV_RETIRED_DBE"},
    {"dcgm_retired_pages_pending", "DCGM_FI_DEV_RETIRED_PENDING"},
    {"dcgm_retired_pages_sbe", "DCGM_FI_DEV_RETIRED_SBE"},
    {"dcgm_sm_clock", "DCGM_FI_DEV_SM_CLOCK"},
    {"dcgm_sync_boost_violation", "DCGM_FI_DEV_SYNC_BOOST_VIOLATION"},
    {"dcgm_thermal_violation", "DCGM_FI_DEV_THERMAL_VIOLATION"},
    {"dcgm_total_energy_consumption", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"},
    {"dcgm_xid_errors", "DCGM_FI_DEV_XID_ERRORS"},
};

// Real DCGM field names (dcgm_fields.h) and dcgm-exporter names that NVML
// alone cannot serve or that gpuscope does not export under a DCGM name.
constexpr std::string_view kUnsupported[] = {
    "DCGM_EXP_GPU_HEALTH_STATUS",
    "DCGM_EXP_P2P_STATUS",
    "DCGM_FI_CUDA_DRIVER_VERSION",
    "DCGM_FI_BIND_UNBIND_EVENT",
    "DCGM_FI_DEV_GPU_UTIL_RATIO",  // a legacy id-203 name whose unit dcgm-exporter 4.9 changed
    "DCGM_FI_DEV_P2P_NVLINK_STATUS",
    "DCGM_FI_DEV_GPM_SUPPORT",
    "DCGM_FI_DEV_REQUESTED_POWER_PROFILE_MASK",
    "DCGM_FI_DEV_ENFORCED_POWER_PROFILE_MASK",
    "DCGM_FI_DEV_VALID_POWER_PROFILE_MASK",
    "DCGM_FI_DEV_FABRIC_CLUSTER_UUID",  // a string: on gpuscope_fabric_info{cluster_uuid}
    "DCGM_FI_DEV_C2C_LINK_COUNT",
    "DCGM_FI_DEV_C2C_LINK_STATUS",
    "DCGM_FI_DEV_C2C_MAX_BANDWIDTH",
    "DCGM_FI_DEV_THRESHOLD_SRM",
    "DCGM_FI_DEV_DIAG_MEMORY_RESULT",
    "DCGM_FI_DEV_DIAG_DIAGNOSTIC_RESULT",
    "DCGM_FI_DEV_DIAG_PCIE_RESULT",
    "DCGM_FI_DEV_DIAG_TARGETED_STRESS_RESULT",
    "DCGM_FI_DEV_DIAG_TARGETED_POWER_RESULT",
    "DCGM_FI_DEV_DIAG_MEMORY_BANDWIDTH_RESULT",
    "DCGM_FI_DEV_DIAG_MEMTEST_RESULT",
    "DCGM_FI_DEV_DIAG_PULSE_TEST_RESULT",
    "DCGM_FI_DEV_DIAG_EUD_RESULT",
    "DCGM_FI_DEV_DIAG_CPU_EUD_RESULT",
    "DCGM_FI_DEV_DIAG_SOFTWARE_RESULT",
    "DCGM_FI_DEV_DIAG_NVBANDWIDTH_RESULT",
    "DCGM_FI_DEV_DIAG_STATUS",
    "DCGM_FI_DEV_DIAG_NCCL_TESTS_RESULT",
    "DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_MAX",
    "DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_HIGH",
    "DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_PARTIAL",
    "DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_LOW",
    "DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_NONE",
    "DCGM_FI_PROCESS_NAME",
    "DCGM_FI_DEV_NVML_INDEX",
    "DCGM_FI_DEV_PCI_COMBINED_ID",
    "DCGM_FI_DEV_PCI_SUBSYS_ID",
    "DCGM_FI_GPU_TOPOLOGY_PCI",
    "DCGM_FI_GPU_TOPOLOGY_NVLINK",
    "DCGM_FI_GPU_TOPOLOGY_AFFINITY",
    "DCGM_FI_DEV_MIG_MODE",
    "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR",
    "DCGM_FI_DEV_MIG_MAX_SLICES",
    "DCGM_FI_DEV_MIG_GI_INFO",
    "DCGM_FI_DEV_MIG_CI_INFO",
    "DCGM_FI_DEV_MIG_ATTRIBUTES",
    "DCGM_FI_DEV_CC_MODE",
    "DCGM_FI_SYNC_BOOST",
    "DCGM_FI_DEV_APP_SM_CLOCK",
    "DCGM_FI_DEV_APP_MEM_CLOCK",
    "DCGM_FI_DEV_MAX_VIDEO_CLOCK",
    "DCGM_FI_DEV_AUTOBOOST",
    "DCGM_FI_DEV_SUPPORTED_CLOCKS",
    "DCGM_FI_DEV_GPU_TEMP_LIMIT",
    "DCGM_FI_DEV_PSTATE",
    "DCGM_FI_DEV_PCIE_TX_THROUGHPUT",
    "DCGM_FI_DEV_PCIE_RX_THROUGHPUT",
    "DCGM_FI_DEV_ACCOUNTING_DATA",
    "DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION",
    "DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION",
    "DCGM_FI_DEV_SUPPORTED_TYPE_INFO",
    "DCGM_FI_DEV_CREATABLE_VGPU_TYPE_IDS",
    "DCGM_FI_DEV_VGPU_INSTANCE_IDS",
    "DCGM_FI_DEV_VGPU_UTILIZATIONS",
    "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION",
    "DCGM_FI_DEV_ENC_STATS",
    "DCGM_FI_DEV_FBC_STATS",
    "DCGM_FI_DEV_FBC_SESSIONS_INFO",
    "DCGM_FI_DEV_VGPU_VM_ID",
    "DCGM_FI_DEV_VGPU_VM_NAME",
    "DCGM_FI_DEV_VGPU_TYPE",
    "DCGM_FI_DEV_VGPU_UUID",
    "DCGM_FI_DEV_VGPU_DRIVER_VERSION",
    "DCGM_FI_DEV_VGPU_MEMORY_USAGE",
    "DCGM_FI_DEV_VGPU_FRAME_RATE_LIMIT",
    "DCGM_FI_DEV_VGPU_ENC_STATS",
    "DCGM_FI_DEV_VGPU_ENC_SESSIONS_INFO",
    "DCGM_FI_DEV_VGPU_FBC_STATS",
    "DCGM_FI_DEV_VGPU_FBC_SESSIONS_INFO",
    "DCGM_FI_DEV_VGPU_INSTANCE_LICENSE_STATE",
    "DCGM_FI_DEV_VGPU_PCI_ID",
    "DCGM_FI_DEV_VGPU_VM_GPU_INSTANCE_ID",
    "DCGM_FI_DEV_GPU_NVLINK_ERRORS",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL_TX",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL_RX",
    "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE",
    "DCGM_FI_PROF_PIPE_INT_ACTIVE",
    "DCGM_FI_PROF_C2C_TX_ALL_BYTES",
    "DCGM_FI_PROF_C2C_TX_DATA_BYTES",
    "DCGM_FI_PROF_C2C_RX_ALL_BYTES",
    "DCGM_FI_PROF_C2C_RX_DATA_BYTES",
};

// Families of numbered fields: prefix, a number 0..max, suffix.
struct NumberedName {
  std::string_view prefix, suffix;
  int max;
};
constexpr NumberedName kNumbered[] = {
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L", "", 17},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L", "", 17},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L", "", 17},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L", "", 17},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L", "", 17},
    {"DCGM_FI_PROF_NVLINK_L", "_TX_BYTES", 17},
    {"DCGM_FI_PROF_NVLINK_L", "_RX_BYTES", 17},
    {"DCGM_FI_PROF_NVDEC", "_ACTIVE", 7},
    {"DCGM_FI_PROF_NVJPG", "_ACTIVE", 7},
    {"DCGM_FI_PROF_NVOFA", "_ACTIVE", 1},
    {"DCGM_FI_DEV_CPU_AFFINITY_", "", 3},
    {"DCGM_FI_DEV_MEM_AFFINITY_", "", 3},
};

bool MatchesNumbered(std::string_view name, const NumberedName& n) {
  if (name.size() <= n.prefix.size() + n.suffix.size()) return false;
  if (!name.starts_with(n.prefix) || !name.ends_with(n.suffix)) return false;
  std::string_view digits =
      name.substr(n.prefix.size(), name.size() - n.prefix.size() - n.suffix.size());
  if (digits.size() > 2 || (digits.size() == 2 && digits[0] == '0')) return false;
  int value = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size() && value <= n.max;
}

// Per-structure ECC counters: DCGM_FI_DEV_ECC_{SBE,DBE}_{VOL,AGG}_<unit>.
bool IsEccDetailField(std::string_view name) {
  constexpr std::string_view kPrefixes[] = {"DCGM_FI_DEV_ECC_SBE_VOL_", "DCGM_FI_DEV_ECC_DBE_VOL_",
                                            "DCGM_FI_DEV_ECC_SBE_AGG_", "DCGM_FI_DEV_ECC_DBE_AGG_"};
  constexpr std::string_view kUnits[] = {"L1", "L2", "DEV", "REG", "TEX", "SHM", "CBU", "SRM"};
  for (std::string_view prefix : kPrefixes) {
    if (!name.starts_with(prefix)) continue;
    for (std::string_view unit : kUnits) {
      if (name.substr(prefix.size()) == unit) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<LabelField> FindLabelField(std::string_view dcgm_name) {
  for (const LabelFieldName& entry : kLabelFields) {
    if (entry.name == dcgm_name) return entry.field;
  }
  return std::nullopt;
}

std::string LabelFieldValue(LabelField field, const SystemInfo& system, const GpuInfo& gpu) {
  switch (field) {
    case LabelField::kDriverVersion:
      return system.driver_version;
    case LabelField::kNvmlVersion:
      return system.nvml_version;
    case LabelField::kBrand:
      return gpu.brand;
    case LabelField::kSerial:
      return gpu.serial;
    case LabelField::kVbiosVersion:
      return gpu.vbios_version;
    case LabelField::kName:
      return gpu.name;
    case LabelField::kUuid:
      return gpu.mig_uuid.empty() ? gpu.uuid : gpu.mig_uuid;
    case LabelField::kPciBusId:
      return gpu.pci_bus_id;
    case LabelField::kMinorNumber:
      return std::to_string(gpu.minor_number);
    case LabelField::kInforomImage:
      return gpu.inforom_image;
    case LabelField::kInforomOem:
      return gpu.inforom_oem;
    case LabelField::kInforomEcc:
      return gpu.inforom_ecc;
    case LabelField::kInforomPower:
      return gpu.inforom_power;
    case LabelField::kCudaComputeCapability:
      return ComputeCapabilityValue(gpu.compute_capability);
  }
  return {};
}

bool IsExporterField(std::string_view name) {
  for (std::string_view known : kExporterFields) {
    if (known == name) return true;
  }
  return false;
}

std::string_view CanonicalDcgmName(std::string_view name) {
  for (const LegacyName& entry : kLegacyNames) {
    if (entry.legacy == name) return entry.current;
  }
  return name;
}

bool IsServedExporterField(std::string_view name) {
  for (std::string_view served : kServedExporterFields) {
    if (served == name) return true;
  }
  return false;
}

bool IsRenderedVgpuField(std::string_view name) { return name == "DCGM_FI_DEV_VGPU_MEMORY_USAGE"; }

bool IsKnownUnsupportedField(std::string_view name) {
  for (std::string_view known : kUnsupported) {
    if (known == name) return true;
  }
  for (const NumberedName& numbered : kNumbered) {
    if (MatchesNumbered(name, numbered)) return true;
  }
  return IsEccDetailField(name);
}

}  // namespace gpuscope::prom
