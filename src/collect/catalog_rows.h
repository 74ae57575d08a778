// Internal to src/collect: the rows of the metric catalog as a constexpr
// table, so that compile-time checks in src/collect can read them (catalog.cc
// checks names and families; readers_table.cc checks that every Source a row
// names has a reader). Everyone else reads gpuscope::kCatalog (catalog.h).
//
// A row owns every fact about its metric (STYLE.md point 13): how it is read
// (its Source, and a field id, GPM metric id or call with its argument), its
// native, dcgm-exporter and nvidia-smi names, its lean-profile policy (a
// required column: a row without one does not compile), its docs help text.
// Adding a metric read through field values: one X(...) entry in catalog.h,
// one row here (its field id from nvml/field_ids.h) and one line in the
// simulator's field table (sim/exports_fields.cc); docs/adding-a-metric.md
// walks it.
//
// Thread safety: immutable, constexpr.
#pragma once

#include <array>
#include <string_view>

#include "gpuscope/catalog.h"
#include "nvml/device.h"
#include "nvml/field_ids.h"

namespace gpuscope::catalog_rows {

inline constexpr MetricType kGauge = MetricType::kGauge;
inline constexpr MetricType kCounter = MetricType::kCounter;
inline constexpr Read kNoRead{};
inline constexpr NativeName kNoNative{};
inline constexpr DcgmName kNoDcgm{};
inline constexpr SmiName kNoSmi{};
inline constexpr double kMiBToBytes = 1048576.0;

// A field value read with the device's scope 0.
constexpr Read Field(unsigned int id, Scale to_stored = Scale::kIdentity) {
  return {.field = {id, to_stored, false}};
}
// A field id that older driver branches used for something else.
constexpr Read NewField(unsigned int id, unsigned int min_driver) {
  return {.field = {id, Scale::kIdentity, false, min_driver}};
}
// A per-link NVLink field, summed over every link.
constexpr Read LinkField(unsigned int id, Scale to_stored = Scale::kIdentity) {
  return {.field = {id, to_stored, true}};
}
// A GPM metric (nvmlGpmMetricsGet), times `to_stored`.
constexpr Read Gpm(unsigned int id, double to_stored = 1) { return {.gpm = {id, to_stored}}; }
// One NVML call with an argument (an nvml::ClockDomain, nvml::TempThreshold).
template <typename Arg>
constexpr Read Call(std::string_view name, Arg arg) {
  return {.call = {name, static_cast<unsigned int>(arg)}};
}

// The lean profile's policy (export/profile.h), a required column.
inline constexpr Lean kAlways{LeanPolicy::kAlways};
inline constexpr Lean kSparse{LeanPolicy::kSparse};
inline constexpr Lean kFullOnly{LeanPolicy::kFullOnly};
inline constexpr Lean kNoGpm{LeanPolicy::kNoGpm};

constexpr NativeName Native(std::string_view name, MetricType type, Scale scale = Scale::kIdentity,
                            std::string_view labels = "") {
  return {name, labels, type, scale};
}
// dcgm-exporter prints most fields as integers; doubles are named here.
constexpr DcgmName Dcgm(std::string_view name, MetricType type, Scale scale = Scale::kIdentity,
                        bool integer = true) {
  return {name, type, scale, integer};
}
constexpr DcgmName DcgmDouble(std::string_view name, MetricType type,
                              Scale scale = Scale::kIdentity) {
  return {name, type, scale, false};
}
// A DCGM name with a second, newer name for the same field.
constexpr DcgmName WithAlias(DcgmName dcgm, std::string_view alias) {
  dcgm.alias = alias;
  return dcgm;
}
constexpr SmiName Smi(std::string_view name, std::string_view unit,
                      SmiFormat format = SmiFormat::kInteger, Scale scale = Scale::kIdentity) {
  return {name, unit, format, scale};
}

using enum Metric;
using enum Category;
using enum Tier;
using enum Source;
using enum Scale;
using nvml::ClockDomain;
using nvml::TempThreshold;

// clang-format off
inline constexpr std::array<MetricDef, kMetricCount> kRows = {{
  // Useful work.
  {kGpuUtil, "gpu_util", kWork, kFast, kUtilization, kNoRead,
   Native("gpuscope_gpu_utilization_ratio", kGauge, kPercentToRatio), kFullOnly,
   Dcgm("DCGM_FI_DEV_GPU_UTIL", kGauge), Smi("utilization.gpu", "%"),
   "Share of the last sample period during which a kernel was running (not how busy the SMs were)."},
  {kMemCopyUtil, "mem_copy_util", kWork, kFast, kUtilization, kNoRead,
   Native("gpuscope_memory_copy_utilization_ratio", kGauge, kPercentToRatio), kNoGpm,
   Dcgm("DCGM_FI_DEV_MEM_COPY_UTIL", kGauge), Smi("utilization.memory", "%"),
   "Share of the last sample period during which device memory was being read or written."},
  {kEncoderUtil, "encoder_util", kWork, kFast, kEncoder, kNoRead,
   Native("gpuscope_encoder_utilization_ratio", kGauge, kPercentToRatio), kFullOnly,
   Dcgm("DCGM_FI_DEV_ENC_UTIL", kGauge), Smi("utilization.encoder", "%"),
   "Video encoder utilization."},
  {kDecoderUtil, "decoder_util", kWork, kFast, kDecoder, kNoRead,
   Native("gpuscope_decoder_utilization_ratio", kGauge, kPercentToRatio), kFullOnly,
   Dcgm("DCGM_FI_DEV_DEC_UTIL", kGauge), Smi("utilization.decoder", "%"),
   "Video decoder utilization."},
  {kSmActive, "sm_active", kWork, kFast, kGpm, Gpm(nvml::kGpmSmUtil),
   Native("gpuscope_sm_active_ratio", kGauge, kPercentToRatio), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_SM_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an SM had at least one warp assigned (GPM)."},
  {kSmOccupancy, "sm_occupancy", kWork, kFast, kGpm, Gpm(nvml::kGpmSmOccupancy),
   Native("gpuscope_sm_occupancy_ratio", kGauge, kPercentToRatio), kAlways,
   DcgmDouble("DCGM_FI_PROF_SM_OCCUPANCY", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of resident warps to the SM maximum (GPM)."},
  {kTensorActive, "tensor_active", kWork, kFast, kGpm, Gpm(nvml::kGpmAnyTensorUtil),
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="tensor")"), kAlways,
   DcgmDouble("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kTensorHmmaActive, "tensor_hmma_active", kWork, kFast, kGpm, Gpm(nvml::kGpmHmmaTensorUtil),
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="tensor_hmma")"), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp64Active, "fp64_active", kWork, kFast, kGpm, Gpm(nvml::kGpmFp64Util),
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp64")"), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PIPE_FP64_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp32Active, "fp32_active", kWork, kFast, kGpm, Gpm(nvml::kGpmFp32Util),
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp32")"), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PIPE_FP32_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp16Active, "fp16_active", kWork, kFast, kGpm, Gpm(nvml::kGpmFp16Util),
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp16")"), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PIPE_FP16_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kDramActive, "dram_active", kWork, kFast, kGpm, Gpm(nvml::kGpmDramBwUtil),
   Native("gpuscope_dram_active_ratio", kGauge, kPercentToRatio), kAlways,
   DcgmDouble("DCGM_FI_PROF_DRAM_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles the device memory interface was sending or receiving data (GPM)."},
  {kGrEngineActive, "gr_engine_active", kWork, kFast, kGpm, Gpm(nvml::kGpmGraphicsUtil),
   Native("gpuscope_graphics_engine_active_ratio", kGauge, kPercentToRatio), kFullOnly,
   DcgmDouble("DCGM_FI_PROF_GR_ENGINE_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of time the graphics (compute) engine was active (GPM)."},
  {kBusySeconds, "busy_seconds", kWork, kDerived, kIntegral, kNoRead,
   Native("gpuscope_gpu_busy_seconds_total", kCounter), kAlways, kNoDcgm, kNoSmi,
   "Seconds a kernel was running, integrated between samples (utilization x time)."},
  {kIdleSeconds, "idle_seconds", kWork, kDerived, kIntegral, kNoRead,
   Native("gpuscope_gpu_idle_seconds_total", kCounter), kAlways, kNoDcgm, kNoSmi,
   "Seconds the GPU ran no kernel at all (utilization 0), integrated between samples."},
  {kSmActiveSeconds, "sm_active_seconds", kWork, kDerived, kIntegral, kNoRead,
   Native("gpuscope_sm_active_seconds_total", kCounter), kAlways, kNoDcgm, kNoSmi,
   "SM-active seconds (SM activity x time) integrated between samples (GPM)."},

  // Memory.
  {kMemoryTotal, "memory_total", kMemory, kSlow, kMemoryInfo, kNoRead,
   Native("gpuscope_memory_total_bytes", kGauge), kAlways, Dcgm("DCGM_FI_DEV_FB_TOTAL", kGauge, kBytesToMiB),
   Smi("memory.total", "MiB", SmiFormat::kInteger, kBytesToMiB), "Framebuffer memory installed."},
  {kMemoryUsed, "memory_used", kMemory, kFast, kMemoryInfo, kNoRead,
   Native("gpuscope_memory_used_bytes", kGauge), kAlways, Dcgm("DCGM_FI_DEV_FB_USED", kGauge, kBytesToMiB),
   Smi("memory.used", "MiB", SmiFormat::kInteger, kBytesToMiB),
   "Framebuffer memory allocated by processes (reserved excluded)."},
  {kMemoryFree, "memory_free", kMemory, kFast, kMemoryInfo, kNoRead,
   Native("gpuscope_memory_free_bytes", kGauge), kFullOnly, Dcgm("DCGM_FI_DEV_FB_FREE", kGauge, kBytesToMiB),
   Smi("memory.free", "MiB", SmiFormat::kInteger, kBytesToMiB), "Framebuffer memory free."},
  {kMemoryReserved, "memory_reserved", kMemory, kSlow, kMemoryInfo, kNoRead,
   Native("gpuscope_memory_reserved_bytes", kGauge), kFullOnly,
   Dcgm("DCGM_FI_DEV_FB_RESERVED", kGauge, kBytesToMiB),
   Smi("memory.reserved", "MiB", SmiFormat::kInteger, kBytesToMiB),
   "Framebuffer memory reserved by the driver and firmware."},
  {kMemoryUsedPeak, "memory_used_peak", kMemory, kDerived, kPeak, kNoRead,
   Native("gpuscope_memory_used_peak_bytes", kGauge), kAlways, kNoDcgm, kNoSmi,
   "Highest framebuffer memory used over the trailing window."},

  // Energy and clocks.
  {kPowerUsage, "power_usage", kEnergy, kFast, kPower, kNoRead,
   Native("gpuscope_power_usage_watts", kGauge), kAlways, DcgmDouble("DCGM_FI_DEV_POWER_USAGE", kGauge),
   Smi("power.draw", "W", SmiFormat::kWatts), "Power draw (1 s average on Ampere and newer)."},
  {kPowerAverage, "power_average", kEnergy, kFast, kFieldValue,
   Field(nvml::kFiPowerAverage, kMilliToUnit),
   kNoNative, kFullOnly, kNoDcgm,
   Smi("power.draw.average", "W", SmiFormat::kWatts), "Power draw averaged over one second."},
  {kPowerInstant, "power_instant", kEnergy, kFast, kFieldValue,
   Field(nvml::kFiPowerInstant, kMilliToUnit),
   kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_POWER_USAGE_INSTANT", kGauge),
   Smi("power.draw.instant", "W", SmiFormat::kWatts), "Instantaneous power draw."},
  {kEnergyConsumption, "energy", kEnergy, kFast, kFieldValue,
   Field(nvml::kFiTotalEnergyConsumption),
   Native("gpuscope_energy_joules_total", kCounter, kMilliToUnit), kAlways,
   Dcgm("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", kCounter), kNoSmi,
   "Energy consumed since the driver loaded (integral of power)."},
  {kPowerLimit, "power_limit", kEnergy, kSlow, kPowerLimits, kNoRead,
   Native("gpuscope_power_limit_watts", kGauge), kAlways, DcgmDouble("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", kGauge),
   Smi("enforced.power.limit", "W", SmiFormat::kWatts), "Power limit the GPU enforces now."},
  {kPowerManagementLimit, "power_management_limit", kEnergy, kSlow, kPowerLimits, kNoRead, kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT", kGauge), Smi("power.limit", "W", SmiFormat::kWatts),
   "Power management limit set by the administrator."},
  {kPowerDefaultLimit, "power_default_limit", kEnergy, kSlow, kPowerLimits, kNoRead, kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", kGauge),
   Smi("power.default_limit", "W", SmiFormat::kWatts), "Default power management limit."},
  {kPowerMinLimit, "power_min_limit", kEnergy, kSlow, kPowerLimits, kNoRead, kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN", kGauge),
   Smi("power.min_limit", "W", SmiFormat::kWatts), "Lowest settable power limit."},
  {kPowerMaxLimit, "power_max_limit", kEnergy, kSlow, kPowerLimits, kNoRead, kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX", kGauge),
   Smi("power.max_limit", "W", SmiFormat::kWatts), "Highest settable power limit."},
  {kSmClock, "sm_clock", kEnergy, kFast, kClocks, Call("nvmlDeviceGetClockInfo/sm", ClockDomain::kSm),
   Native("gpuscope_sm_clock_hertz", kGauge, kMegaToUnit), kAlways, Dcgm("DCGM_FI_DEV_SM_CLOCK", kGauge),
   Smi("clocks.current.sm", "MHz"), "SM clock frequency."},
  {kMemClock, "mem_clock", kEnergy, kFast, kClocks, Call("nvmlDeviceGetClockInfo/memory", ClockDomain::kMemory),
   Native("gpuscope_memory_clock_hertz", kGauge, kMegaToUnit), kFullOnly, Dcgm("DCGM_FI_DEV_MEM_CLOCK", kGauge),
   Smi("clocks.current.memory", "MHz"), "Memory clock frequency."},
  {kGraphicsClock, "graphics_clock", kEnergy, kFast, kClocks, Call("nvmlDeviceGetClockInfo/graphics", ClockDomain::kGraphics), kNoNative, kFullOnly, kNoDcgm,
   Smi("clocks.current.graphics", "MHz"), "Graphics clock frequency."},
  {kVideoClock, "video_clock", kEnergy, kFast, kClocks, Call("nvmlDeviceGetClockInfo/video", ClockDomain::kVideo), kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_VIDEO_CLOCK", kGauge), Smi("clocks.current.video", "MHz"),
   "Video clock frequency."},
  {kMaxSmClock, "max_sm_clock", kEnergy, kSlow, kMaxClocks, Call("nvmlDeviceGetMaxClockInfo/sm", ClockDomain::kSm),
   Native("gpuscope_sm_clock_max_hertz", kGauge, kMegaToUnit), kAlways, Dcgm("DCGM_FI_DEV_MAX_SM_CLOCK", kGauge),
   Smi("clocks.max.sm", "MHz"), "Maximum SM clock frequency."},
  {kMaxMemClock, "max_mem_clock", kEnergy, kSlow, kMaxClocks, Call("nvmlDeviceGetMaxClockInfo/memory", ClockDomain::kMemory), kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_MAX_MEM_CLOCK", kGauge), Smi("clocks.max.memory", "MHz"),
   "Maximum memory clock frequency."},
  {kMaxGraphicsClock, "max_graphics_clock", kEnergy, kSlow, kMaxClocks, Call("nvmlDeviceGetMaxClockInfo/graphics", ClockDomain::kGraphics), kNoNative, kFullOnly, kNoDcgm,
   Smi("clocks.max.graphics", "MHz"), "Maximum graphics clock frequency."},
  {kPState, "pstate", kEnergy, kFast, kPerformanceState, kNoRead,
   Native("gpuscope_performance_state", kGauge), kFullOnly, kNoDcgm, Smi("pstate", "", SmiFormat::kPState),
   "Performance state: 0 (maximum) to 15 (minimum)."},
  {kClockReasons, "clock_reasons", kEnergy, kFast, kClockEventReasons, kNoRead, kNoNative, kFullOnly,
   WithAlias(Dcgm("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", kGauge), "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"),
   Smi("clocks_event_reasons.active", "", SmiFormat::kHex64),
   "Bitmask of the reasons the clocks are held down now."},
  {kClockReasonsSupported, "clock_reasons_supported", kEnergy, kSlow, kClockEventReasons, kNoRead, kNoNative, kFullOnly,
   kNoDcgm, Smi("clocks_event_reasons.supported", "", SmiFormat::kHex64),
   "Bitmask of the clock event reasons this GPU reports."},
  {kThrottleGpuIdle, "throttle_gpu_idle", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="gpu_idle")"), kFullOnly,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleAppClocks, "throttle_applications_clocks", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="applications_clocks_setting")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSwPowerCap, "throttle_sw_power_cap", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="sw_power_cap")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwSlowdown, "throttle_hw_slowdown", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="hw_slowdown")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSyncBoost, "throttle_sync_boost", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="sync_boost")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSwThermal, "throttle_sw_thermal", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="sw_thermal_slowdown")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwThermal, "throttle_hw_thermal", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="hw_thermal_slowdown")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwPowerBrake, "throttle_hw_power_brake", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="hw_power_brake_slowdown")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleDisplayClock, "throttle_display_clock", kEnergy, kDerived, kIntegral, kNoRead,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="display_clock_setting")"), kSparse,
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},

  // Board facts dcgm-exporter serves as fields (no native family: the
  // inventory and gpuscope_gpu_info carry them).
  {kFbUsedRatio, "fb_used_ratio", kMemory, kFast, kMemoryInfo, kNoRead, kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_DEV_FB_USED_PERCENT", kGauge), kNoSmi,
   "Share of the usable framebuffer in use: used / (total - reserved), 0 to 1."},
  {kBar1Total, "bar1_total", kMemory, kSlow, kBar1, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_BAR1_TOTAL", kGauge, kBytesToMiB), kNoSmi,
   "BAR1 aperture (the framebuffer window the host can map), MiB in dcgm-exporter."},
  {kBar1Used, "bar1_used", kMemory, kSlow, kBar1, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_BAR1_USED", kGauge, kBytesToMiB), kNoSmi,
   "BAR1 aperture in use, MiB in dcgm-exporter."},
  {kBar1Free, "bar1_free", kMemory, kSlow, kBar1, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_BAR1_FREE", kGauge, kBytesToMiB), kNoSmi,
   "BAR1 aperture free, MiB in dcgm-exporter."},
  {kDeviceCount, "device_count", kInventory, kSlow, kGpuCount, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_COUNT", kGauge), kNoSmi, "Number of GPUs the driver sees."},
  {kComputeMode, "compute_mode", kInventory, kSlow, kModes, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_COMPUTE_MODE", kGauge), kNoSmi,
   "Compute mode (NVML's numbering): 0 default, 2 prohibited, 3 exclusive process."},
  {kPersistenceMode, "persistence_mode", kInventory, kSlow, kModes, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_PERSISTENCE_MODE", kGauge), kNoSmi, "1 when persistence mode is on."},
  {kVirtualizationMode, "virtualization_mode", kInventory, kSlow, kModes, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_VIRTUAL_MODE", kGauge), kNoSmi,
   "Virtualization mode: 0 none, 1 pass-through, 2 vGPU, 3 host vGPU, 4 host vSGA."},
  {kInforomChecksum, "inforom_checksum", kInventory, kSlow, kInforom, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_INFOROM_CONFIG_CHECK", kGauge), kNoSmi,
   "Checksum of the InfoROM configuration."},
  {kInforomValid, "inforom_valid", kHealth, kSlow, kInforom, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_INFOROM_CONFIG_VALID", kGauge), kNoSmi,
   "1 when the InfoROM validates, 0 when the driver reports it corrupted."},
  // vGPU guest (the GPU is a VM's virtual GPU): its licence. A host's virtual
  // GPUs have their own families (export/builtin_families.h).
  {kVgpuLicensed, "vgpu_licensed", kHealth, kSlow, kVgpuLicense, kNoRead, kNoNative, kAlways,
   Dcgm("DCGM_FI_DEV_VGPU_LICENSE_STATUS", kGauge), kNoSmi,
   "In a vGPU guest: 1 while the virtual GPU holds a licence, 0 when it has none; absent off a "
   "guest."},
  {kVgpuLicenseState, "vgpu_license_state", kHealth, kSlow, kVgpuLicense, kNoRead,
   Native("gpuscope_vgpu_license_state", kGauge), kAlways, kNoDcgm, kNoSmi,
   "In a vGPU guest: the licence as NVML's NVML_GRID_LICENSE_STATE_*: 5 licensed, 2 "
   "unlicensed in the 20-minute grace period (full capability), 3 unlicensed and restricted, "
   "4 unlicensed (no expiry known); absent off a guest."},
  // vGPU host board: its time-slicing scheduler (readers_vgpu_scheduler.cc).
  {kVgpuSchedulerPolicy, "vgpu_scheduler_policy", kWork, kSlow, kVgpuScheduler, kNoRead,
   Native("gpuscope_vgpu_scheduler_policy_state", kGauge), kAlways, kNoDcgm, kNoSmi,
   "On a vGPU host board: the vGPU scheduler's policy, 1 best effort, 2 equal share, 3 fixed "
   "share (nvmlDeviceGetVgpuSchedulerState); absent off a host."},
  {kVgpuSchedulerTimeslice, "vgpu_scheduler_timeslice", kWork, kSlow, kVgpuScheduler, kNoRead,
   Native("gpuscope_vgpu_scheduler_timeslice_seconds", kGauge), kAlways, kNoDcgm, kNoSmi,
   "On a vGPU host board: the time slice each virtual GPU runs before the next one's turn."},
  {kVgpuSchedulerRunlists, "vgpu_scheduler_runlists", kWork, kSlow, kVgpuScheduler, kNoRead,
   Native("gpuscope_vgpu_scheduler_runlists_active", kGauge), kAlways, kNoDcgm, kNoSmi,
   "On a vGPU host board: virtual GPUs (software runlists) that ran in the scheduler's log "
   "(its last 200 time slices)."},
  {kVgpuSchedulerWait, "vgpu_scheduler_wait", kWork, kSlow, kVgpuScheduler, kNoRead,
   Native("gpuscope_vgpu_scheduler_wait_ratio", kGauge), kAlways, kNoDcgm, kNoSmi,
   "On a vGPU host board: the share of the time they had work that the virtual GPUs in the "
   "scheduler's log spent preempted, waiting for their turn (mean over them; "
   "nvmlDeviceGetVgpuSchedulerLog). Near 0 without contention."},

  // Temperature.
  {kGpuTemp, "gpu_temp", kHealth, kFast, kTemperature, kNoRead,
   Native("gpuscope_gpu_temperature_celsius", kGauge), kAlways, Dcgm("DCGM_FI_DEV_GPU_TEMP", kGauge),
   Smi("temperature.gpu", ""), "GPU die temperature."},
  {kGpuTempPeak, "gpu_temp_peak", kHealth, kDerived, kPeak, kNoRead,
   Native("gpuscope_gpu_temperature_peak_celsius", kGauge), kFullOnly, kNoDcgm, kNoSmi,
   "Highest GPU temperature over the trailing window."},
  {kMemoryTemp, "memory_temp", kHealth, kFast, kFieldValue, Field(nvml::kFiMemoryTemp),
   Native("gpuscope_memory_temperature_celsius", kGauge), kAlways, Dcgm("DCGM_FI_DEV_MEMORY_TEMP", kGauge),
   Smi("temperature.memory", ""), "HBM temperature."},
  {kSlowdownTemp, "slowdown_temp", kHealth, kSlow, kThresholds, Call("nvmlDeviceGetTemperatureThreshold/slowdown", TempThreshold::kSlowdown),
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity, R"(threshold="slowdown")"), kAlways,
   Dcgm("DCGM_FI_DEV_SLOWDOWN_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kShutdownTemp, "shutdown_temp", kHealth, kSlow, kThresholds, Call("nvmlDeviceGetTemperatureThreshold/shutdown", TempThreshold::kShutdown),
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity, R"(threshold="shutdown")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_SHUTDOWN_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kGpuMaxTemp, "gpu_max_temp", kHealth, kSlow, kThresholds, Call("nvmlDeviceGetTemperatureThreshold/gpu_max", TempThreshold::kGpuMax),
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity,
          R"(threshold="gpu_max_operating")"), kAlways,
   Dcgm("DCGM_FI_DEV_GPU_MAX_OP_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kMemoryMaxTemp, "memory_max_temp", kHealth, kSlow, kThresholds, Call("nvmlDeviceGetTemperatureThreshold/memory_max", TempThreshold::kMemoryMax),
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity,
          R"(threshold="memory_max_operating")"), kAlways,
   Dcgm("DCGM_FI_DEV_MEM_MAX_OP_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kFanSpeed, "fan_speed", kHealth, kSlow, kFan, kNoRead,
   Native("gpuscope_fan_speed_ratio", kGauge, kPercentToRatio), kFullOnly, Dcgm("DCGM_FI_DEV_FAN_SPEED", kGauge),
   Smi("fan.speed", "%"), "Fan speed relative to its maximum."},

  // Interconnect.
  {kPcieLinkGen, "pcie_link_gen", kInterconnect, kSlow, kPcieLink, kNoRead,
   Native("gpuscope_pcie_link_generation", kGauge), kAlways, Dcgm("DCGM_FI_DEV_PCIE_LINK_GEN", kGauge),
   Smi("pcie.link.gen.current", ""), "Current PCIe link generation."},
  {kPcieLinkGenMax, "pcie_link_gen_max", kInterconnect, kSlow, kPcieLink, kNoRead,
   Native("gpuscope_pcie_link_generation_max", kGauge), kAlways, Dcgm("DCGM_FI_DEV_PCIE_MAX_LINK_GEN", kGauge),
   Smi("pcie.link.gen.max", ""), "Highest PCIe link generation the GPU and system support."},
  {kPcieLinkWidth, "pcie_link_width", kInterconnect, kSlow, kPcieLink, kNoRead,
   Native("gpuscope_pcie_link_width", kGauge), kAlways, Dcgm("DCGM_FI_DEV_PCIE_LINK_WIDTH", kGauge),
   Smi("pcie.link.width.current", ""), "Current PCIe link width (lanes)."},
  {kPcieLinkWidthMax, "pcie_link_width_max", kInterconnect, kSlow, kPcieLink, kNoRead,
   Native("gpuscope_pcie_link_width_max", kGauge), kAlways, Dcgm("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", kGauge),
   Smi("pcie.link.width.max", ""), "Widest PCIe link the GPU and system support (lanes)."},
  {kPcieTxBytesRate, "pcie_tx_rate", kInterconnect, kPcie, kPcieThroughput, Gpm(nvml::kGpmPcieTxPerSec, kMiBToBytes), kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PCIE_TX_BYTES", kGauge), kNoSmi,
   "PCIe bytes transmitted per second, headers included."},
  {kPcieRxBytesRate, "pcie_rx_rate", kInterconnect, kPcie, kPcieThroughput, Gpm(nvml::kGpmPcieRxPerSec, kMiBToBytes), kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_PROF_PCIE_RX_BYTES", kGauge), kNoSmi,
   "PCIe bytes received per second, headers included."},
  {kPcieTxBytes, "pcie_tx_bytes", kInterconnect, kDerived, kIntegral, kNoRead,
   Native("gpuscope_pcie_bytes_total", kCounter, kIdentity, R"(direction="tx")"), kAlways, kNoDcgm, kNoSmi,
   "PCIe bytes moved, integrated from the throughput samples."},
  {kPcieRxBytes, "pcie_rx_bytes", kInterconnect, kDerived, kIntegral, kNoRead,
   Native("gpuscope_pcie_bytes_total", kCounter, kIdentity, R"(direction="rx")"), kAlways, kNoDcgm, kNoSmi,
   "PCIe bytes moved, integrated from the throughput samples."},
  {kPcieReplays, "pcie_replays", kHealth, kSlow, kFieldValue, Field(nvml::kFiPcieReplayCounter),
   Native("gpuscope_pcie_replays_total", kCounter), kSparse, Dcgm("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", kCounter),
   kNoSmi, "PCIe link retries (replays); a rising rate means a marginal link."},
  {kNvLinkTxBytesRate, "nvlink_tx_rate", kInterconnect, kFast, kGpm, Gpm(nvml::kGpmNvLinkTotalTxPerSec, kMiBToBytes), kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_PROF_NVLINK_TX_BYTES", kGauge), kNoSmi,
   "NVLink bytes transmitted per second, all links (GPM)."},
  {kNvLinkRxBytesRate, "nvlink_rx_rate", kInterconnect, kFast, kGpm, Gpm(nvml::kGpmNvLinkTotalRxPerSec, kMiBToBytes), kNoNative, kFullOnly,
   DcgmDouble("DCGM_FI_PROF_NVLINK_RX_BYTES", kGauge), kNoSmi,
   "NVLink bytes received per second, all links (GPM)."},
  {kNvLinkTxBytes, "nvlink_tx_bytes", kInterconnect, kFast, kNvLinkThroughput,
   LinkField(nvml::kFiNvLinkThroughputDataTx, kKibiToUnit),
   Native("gpuscope_nvlink_bytes_total", kCounter, kIdentity, R"(direction="tx")"), kAlways, kNoDcgm, kNoSmi,
   "NVLink data bytes moved, all links."},
  {kNvLinkRxBytes, "nvlink_rx_bytes", kInterconnect, kFast, kNvLinkThroughput,
   LinkField(nvml::kFiNvLinkThroughputDataRx, kKibiToUnit),
   Native("gpuscope_nvlink_bytes_total", kCounter, kIdentity, R"(direction="rx")"), kAlways, kNoDcgm, kNoSmi,
   "NVLink data bytes moved, all links."},
  {kNvLinkBandwidthTotal, "nvlink_bandwidth_total", kInterconnect, kFast, kNvLinkThroughput, kNoRead,
   kNoNative, kFullOnly, Dcgm("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", kCounter), kNoSmi,
   "NVLink bytes moved, transmitted and received, all links."},

  // Health.
  {kNvLinkCrcFlitErrors, "nvlink_crc_flit_errors", kHealth, kSlow, kFieldValue,
   LinkField(nvml::kFiNvLinkCrcFlitErrorTotal),
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="crc_flit")"), kAlways,
   Dcgm("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkCrcDataErrors, "nvlink_crc_data_errors", kHealth, kSlow, kFieldValue,
   LinkField(nvml::kFiNvLinkCrcDataErrorTotal),
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="crc_data")"), kAlways,
   Dcgm("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkReplayErrors, "nvlink_replay_errors", kHealth, kSlow, kFieldValue,
   LinkField(nvml::kFiNvLinkReplayErrorTotal),
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="replay")"), kAlways,
   Dcgm("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkRecoveryErrors, "nvlink_recovery_errors", kHealth, kSlow, kFieldValue,
   LinkField(nvml::kFiNvLinkRecoveryErrorTotal),
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="recovery")"), kAlways,
   Dcgm("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kEccMode, "ecc_mode", kHealth, kSlow, kFieldValue, Field(nvml::kFiEccCurrent),
   Native("gpuscope_ecc_enabled", kGauge), kFullOnly, Dcgm("DCGM_FI_DEV_ECC_CURRENT", kGauge),
   Smi("ecc.mode.current", "", SmiFormat::kEnabled),
   "1 when ECC is enabled."},
  {kEccModePending, "ecc_mode_pending", kHealth, kSlow, kFieldValue, Field(nvml::kFiEccPending),
   kNoNative, kFullOnly, Dcgm("DCGM_FI_DEV_ECC_PENDING", kGauge),
   Smi("ecc.mode.pending", "", SmiFormat::kEnabled), "ECC mode after the next reboot."},
  {kEccSbeVolatile, "ecc_sbe_volatile", kHealth, kSlow, kFieldValue, Field(nvml::kFiEccSbeVolTotal),
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity, R"(error="corrected",scope="volatile")"), kSparse,
   Dcgm("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", kCounter), Smi("ecc.errors.corrected.volatile.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccDbeVolatile, "ecc_dbe_volatile", kHealth, kSlow, kFieldValue, Field(nvml::kFiEccDbeVolTotal),
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity,
          R"(error="uncorrected",scope="volatile")"), kSparse,
   Dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", kCounter), Smi("ecc.errors.uncorrected.volatile.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccSbeAggregate, "ecc_sbe_aggregate", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiEccSbeAggTotal),
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity, R"(error="corrected",scope="aggregate")"), kSparse,
   Dcgm("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", kCounter), Smi("ecc.errors.corrected.aggregate.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccDbeAggregate, "ecc_dbe_aggregate", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiEccDbeAggTotal),
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity,
          R"(error="uncorrected",scope="aggregate")"), kSparse,
   Dcgm("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", kCounter),
   Smi("ecc.errors.uncorrected.aggregate.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kRetiredSbe, "retired_sbe", kHealth, kSlow, kFieldValue, Field(nvml::kFiRetiredSbe),
   Native("gpuscope_retired_pages_total", kCounter, kIdentity, R"(cause="multiple_sbe")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_RETIRED_SBE", kCounter), Smi("retired_pages.single_bit_ecc.count", ""),
   "Memory pages retired, by cause (pre-Ampere GPUs; Ampere and newer remap rows)."},
  {kRetiredDbe, "retired_dbe", kHealth, kSlow, kFieldValue, Field(nvml::kFiRetiredDbe),
   Native("gpuscope_retired_pages_total", kCounter, kIdentity, R"(cause="dbe")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_RETIRED_DBE", kCounter), Smi("retired_pages.double_bit.count", ""),
   "Memory pages retired, by cause (pre-Ampere GPUs; Ampere and newer remap rows)."},
  {kRetiredPending, "retired_pending", kHealth, kSlow, kFieldValue, Field(nvml::kFiRetiredPending),
   Native("gpuscope_retired_pages_pending", kGauge), kSparse, Dcgm("DCGM_FI_DEV_RETIRED_PENDING", kCounter),
   Smi("retired_pages.pending", "", SmiFormat::kYesNo),
   "1 when a page retirement waits for the next GPU reset."},
  {kRemappedCorrectable, "remapped_correctable", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiRemappedCor),
   Native("gpuscope_remapped_rows_total", kCounter, kIdentity, R"(cause="correctable")"), kSparse,
   Dcgm("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", kCounter), Smi("remapped_rows.correctable", ""),
   "Memory rows remapped, by the kind of error that caused it."},
  {kRemappedUncorrectable, "remapped_uncorrectable", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiRemappedUnc),
   Native("gpuscope_remapped_rows_total", kCounter, kIdentity, R"(cause="uncorrectable")"), kSparse,
   Dcgm("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", kCounter), Smi("remapped_rows.uncorrectable", ""),
   "Memory rows remapped, by the kind of error that caused it."},
  {kRemappedPending, "remapped_pending", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiRemappedPending),
   Native("gpuscope_remapped_rows_pending", kGauge), kSparse, Dcgm("DCGM_FI_DEV_ROW_REMAP_PENDING", kGauge),
   Smi("remapped_rows.pending", "", SmiFormat::kYesNo),
   "1 when a row remap waits for the next GPU reset."},
  {kRemappedFailure, "remapped_failure", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiRemappedFailure),
   Native("gpuscope_remapped_rows_failure", kGauge), kSparse, Dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", kGauge),
   Smi("remapped_rows.failure", "", SmiFormat::kYesNo),
   "1 when a row remap failed: the GPU needs service."},
  {kPowerViolation, "power_violation", kHealth, kSlow, kFieldValue, Field(nvml::kFiPerfPolicyPower),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="power")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_POWER_VIOLATION", kCounter),
   Smi("clocks_event_reasons_counters.sw_power_cap", "us", SmiFormat::kInteger, kNanoToMicro),
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kThermalViolation, "thermal_violation", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiPerfPolicyThermal),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="thermal")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_THERMAL_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kSyncBoostViolation, "sync_boost_violation", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiPerfPolicySyncBoost),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="sync_boost")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", kCounter),
   Smi("clocks_event_reasons_counters.sync_boost", "us", SmiFormat::kInteger, kNanoToMicro),
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kBoardLimitViolation, "board_limit_violation", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiPerfPolicyBoardLimit),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="board_limit")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kLowUtilViolation, "low_util_violation", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiPerfPolicyLowUtilization),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="low_utilization")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_LOW_UTIL_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kReliabilityViolation, "reliability_violation", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiPerfPolicyReliability),
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="reliability")"), kFullOnly,
   Dcgm("DCGM_FI_DEV_RELIABILITY_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  // The driver's own per-reason counters (nvidia-smi's clocks_event_reasons_counters.*).
  {kSwThermalViolation, "sw_thermal_violation", kHealth, kSlow, kFieldValue,
   NewField(nvml::kFiClocksEventSwThermal, nvml::kFiClocksEventMinDriver), kNoNative, kFullOnly, kNoDcgm,
   Smi("clocks_event_reasons_counters.sw_thermal_slowdown", "us", SmiFormat::kInteger, kNanoToMicro),
   "Nanoseconds the clocks were held down by each reason since the driver loaded (R560+)."},
  {kHwThermalViolation, "hw_thermal_violation", kHealth, kSlow, kFieldValue,
   NewField(nvml::kFiClocksEventHwThermal, nvml::kFiClocksEventMinDriver), kNoNative, kFullOnly, kNoDcgm,
   Smi("clocks_event_reasons_counters.hw_thermal_slowdown", "us", SmiFormat::kInteger, kNanoToMicro),
   "Nanoseconds the clocks were held down by each reason since the driver loaded (R560+)."},
  {kHwPowerBrakeViolation, "hw_power_brake_violation", kHealth, kSlow, kFieldValue,
   NewField(nvml::kFiClocksEventHwPowerBrake, nvml::kFiClocksEventMinDriver), kNoNative, kFullOnly, kNoDcgm,
   Smi("clocks_event_reasons_counters.hw_power_brake_slowdown", "us", SmiFormat::kInteger,
       kNanoToMicro),
   "Nanoseconds the clocks were held down by each reason since the driver loaded (R560+)."},
  {kRecoveryAction, "recovery_action", kHealth, kSlow, kFieldValue,
   Field(nvml::kFiGpuRecoveryAction),
   Native("gpuscope_gpu_recovery_action", kGauge), kSparse, kNoDcgm, Smi("gpu_recovery_action", ""),
   "Action the driver asks for: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset."},
  {kXidLast, "xid_last", kHealth, kEvent, kEvents, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_XID_ERRORS", kGauge), kNoSmi,
   "Value of the last XID error seen (see gpuscope_xid_errors_total for counts by code)."},

  // NVLink fabric (GB200 NVL72, NVSwitch systems), one call: absent where NVML
  // answers NOT_SUPPORTED. Cluster UUID and clique are on gpuscope_fabric_info.
  {kFabricManagerStatus, "fabric_manager_status", kHealth, kSlow, kFabric, kNoRead, kNoNative,
   kFullOnly, Dcgm("DCGM_FI_DEV_FABRIC_MANAGER_STATUS", kGauge), kNoSmi,
   "Fabric registration as DCGM reports it: 1 not started, 2 in progress, 3 success, 4 failure."},
  {kFabricState, "fabric_state", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_state", kGauge), kAlways, kNoDcgm, kNoSmi,
   "NVLink fabric registration state (NVML): 1 not started, 2 in progress, 3 completed."},
  {kFabricErrorCode, "fabric_error_code", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_registration_failure", kGauge), kAlways,
   Dcgm("DCGM_FI_DEV_FABRIC_MANAGER_ERROR_CODE", kGauge), kNoSmi,
   "NVML return code of a fabric registration that completed with an error; 0 while none "
   "failed (gpuscope has no DCGM: NVML's code, not DCGM's translation of it)."},
  {kFabricCliqueId, "fabric_clique_id", kHealth, kSlow, kFabric, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_FABRIC_CLIQUE_ID", kGauge), kNoSmi,
   "The NVLink fabric partition (clique) the GPU belongs to (native: on gpuscope_fabric_info)."},
  {kFabricHealthMask, "fabric_health_mask", kHealth, kSlow, kFabric, kNoRead, kNoNative, kFullOnly,
   Dcgm("DCGM_FI_DEV_FABRIC_HEALTH_MASK", kGauge), kNoSmi,
   "NVML's fabric health mask, raw (0x1AA: healthy); gpuscope_fabric_issue_active splits it."},
  {kFabricDegradedBandwidth, "fabric_degraded_bandwidth", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_issue_active", kGauge, kIdentity, R"(issue="degraded_bandwidth")"),
   kAlways, kNoDcgm, kNoSmi,
   "1 while the fabric health mask reports the issue, 0 when it does not; absent where the "
   "driver does not report it."},
  {kFabricRouteRecovery, "fabric_route_recovery", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_issue_active", kGauge, kIdentity, R"(issue="route_recovery")"),
   kAlways, kNoDcgm, kNoSmi,
   "1 while the fabric health mask reports the issue, 0 when it does not; absent where the "
   "driver does not report it."},
  {kFabricRouteUnhealthy, "fabric_route_unhealthy", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_issue_active", kGauge, kIdentity, R"(issue="route_unhealthy")"),
   kAlways, kNoDcgm, kNoSmi,
   "1 while the fabric health mask reports the issue, 0 when it does not; absent where the "
   "driver does not report it."},
  {kFabricAccessTimeoutRecovery, "fabric_access_timeout_recovery", kHealth, kSlow, kFabric,
   kNoRead,
   Native("gpuscope_fabric_issue_active", kGauge, kIdentity, R"(issue="access_timeout_recovery")"),
   kAlways, kNoDcgm, kNoSmi,
   "1 while the fabric health mask reports the issue, 0 when it does not; absent where the "
   "driver does not report it."},
  {kFabricIncorrectConfig, "fabric_incorrect_configuration", kHealth, kSlow, kFabric, kNoRead,
   Native("gpuscope_fabric_configuration_state", kGauge), kAlways, kNoDcgm, kNoSmi,
   "Fabric configuration check (NVML's code): 1 none, 2 incorrect system GUID, 3 incorrect "
   "chassis serial number, 4 no partition, 5 insufficient NVLinks."},
}};
// clang-format on

}  // namespace gpuscope::catalog_rows
