#include "export/dcgm_fields.h"

#include <array>
#include <charconv>

namespace gpuscope::prom {
namespace {

struct LabelFieldName {
  std::string_view name;
  LabelField field;
};
constexpr std::array<LabelFieldName, 9> kLabelFields = {{
    {"DCGM_FI_DRIVER_VERSION", LabelField::kDriverVersion},
    {"DCGM_FI_NVML_VERSION", LabelField::kNvmlVersion},
    {"DCGM_FI_DEV_BRAND", LabelField::kBrand},
    {"DCGM_FI_DEV_SERIAL", LabelField::kSerial},
    {"DCGM_FI_DEV_VBIOS_VERSION", LabelField::kVbiosVersion},
    {"DCGM_FI_DEV_NAME", LabelField::kName},
    {"DCGM_FI_DEV_UUID", LabelField::kUuid},
    {"DCGM_FI_DEV_PCI_BUSID", LabelField::kPciBusId},
    {"DCGM_FI_DEV_MINOR_NUMBER", LabelField::kMinorNumber},
}};

constexpr std::array<std::string_view, 2> kServedExporterFields = {
    "DCGM_EXP_XID_ERRORS_COUNT",
    "DCGM_EXP_CLOCK_EVENTS_COUNT",
};

// Real DCGM field names (dcgm_fields.h) and dcgm-exporter names that NVML
// alone cannot serve or that gpuscope does not export under a DCGM name.
constexpr std::string_view kUnsupported[] = {
    "DCGM_EXP_GPU_HEALTH_STATUS",
    "DCGM_EXP_P2P_STATUS",
    "DCGM_FI_CUDA_DRIVER_VERSION",
    "DCGM_FI_PROCESS_NAME",
    "DCGM_FI_DEV_COUNT",
    "DCGM_FI_DEV_NVML_INDEX",
    "DCGM_FI_DEV_OEM_INFOROM_VER",
    "DCGM_FI_DEV_ECC_INFOROM_VER",
    "DCGM_FI_DEV_POWER_INFOROM_VER",
    "DCGM_FI_DEV_INFOROM_IMAGE_VER",
    "DCGM_FI_DEV_INFOROM_CONFIG_CHECK",
    "DCGM_FI_DEV_INFOROM_CONFIG_VALID",
    "DCGM_FI_DEV_PCI_COMBINED_ID",
    "DCGM_FI_DEV_PCI_SUBSYS_ID",
    "DCGM_FI_GPU_TOPOLOGY_PCI",
    "DCGM_FI_GPU_TOPOLOGY_NVLINK",
    "DCGM_FI_GPU_TOPOLOGY_AFFINITY",
    "DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY",
    "DCGM_FI_DEV_COMPUTE_MODE",
    "DCGM_FI_DEV_PERSISTENCE_MODE",
    "DCGM_FI_DEV_MIG_MODE",
    "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR",
    "DCGM_FI_DEV_MIG_MAX_SLICES",
    "DCGM_FI_DEV_MIG_GI_INFO",
    "DCGM_FI_DEV_MIG_CI_INFO",
    "DCGM_FI_DEV_MIG_ATTRIBUTES",
    "DCGM_FI_DEV_CC_MODE",
    "DCGM_FI_DEV_BAR1_TOTAL",
    "DCGM_FI_DEV_BAR1_USED",
    "DCGM_FI_DEV_BAR1_FREE",
    "DCGM_FI_SYNC_BOOST",
    "DCGM_FI_DEV_APP_SM_CLOCK",
    "DCGM_FI_DEV_APP_MEM_CLOCK",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
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
    "DCGM_FI_DEV_FB_USED_PERCENT",
    "DCGM_FI_DEV_ECC_CURRENT",
    "DCGM_FI_DEV_ECC_PENDING",
    "DCGM_FI_DEV_VIRTUAL_MODE",
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
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
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
  }
  return {};
}

bool IsServedExporterField(std::string_view name) {
  for (std::string_view served : kServedExporterFields) {
    if (served == name) return true;
  }
  return false;
}

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
