#include "gpuscope/catalog.h"

#include <cmath>

namespace gpuscope {
namespace {

constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;
constexpr NativeName kNoNative{};
constexpr DcgmName kNoDcgm{};
constexpr SmiName kNoSmi{};

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
constexpr SmiName Smi(std::string_view name, std::string_view unit,
                      SmiFormat format = SmiFormat::kInteger, Scale scale = Scale::kIdentity) {
  return {name, unit, format, scale};
}

using enum Metric;
using enum Category;
using enum Tier;
using enum Source;
using enum Scale;

}  // namespace

// clang-format off
constexpr std::array<MetricDef, kMetricCount> kRows = {{
  // Useful work.
  {kGpuUtil, "gpu_util", kWork, kFast, kUtilization, 0,
   Native("gpuscope_gpu_utilization_ratio", kGauge, kPercentToRatio),
   Dcgm("DCGM_FI_DEV_GPU_UTIL", kGauge), Smi("utilization.gpu", "%"),
   "Share of the last sample period during which a kernel was running (not how busy the SMs were)."},
  {kMemCopyUtil, "mem_copy_util", kWork, kFast, kUtilization, 0,
   Native("gpuscope_memory_copy_utilization_ratio", kGauge, kPercentToRatio),
   Dcgm("DCGM_FI_DEV_MEM_COPY_UTIL", kGauge), Smi("utilization.memory", "%"),
   "Share of the last sample period during which device memory was being read or written."},
  {kEncoderUtil, "encoder_util", kWork, kFast, kEncoder, 0,
   Native("gpuscope_encoder_utilization_ratio", kGauge, kPercentToRatio),
   Dcgm("DCGM_FI_DEV_ENC_UTIL", kGauge), Smi("utilization.encoder", "%"),
   "Video encoder utilization."},
  {kDecoderUtil, "decoder_util", kWork, kFast, kDecoder, 0,
   Native("gpuscope_decoder_utilization_ratio", kGauge, kPercentToRatio),
   Dcgm("DCGM_FI_DEV_DEC_UTIL", kGauge), Smi("utilization.decoder", "%"),
   "Video decoder utilization."},
  {kSmActive, "sm_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_sm_active_ratio", kGauge, kPercentToRatio),
   DcgmDouble("DCGM_FI_PROF_SM_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an SM had at least one warp assigned (GPM)."},
  {kSmOccupancy, "sm_occupancy", kWork, kFast, kGpm, 0,
   Native("gpuscope_sm_occupancy_ratio", kGauge, kPercentToRatio),
   DcgmDouble("DCGM_FI_PROF_SM_OCCUPANCY", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of resident warps to the SM maximum (GPM)."},
  {kTensorActive, "tensor_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="tensor")"),
   DcgmDouble("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kTensorHmmaActive, "tensor_hmma_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="tensor_hmma")"),
   DcgmDouble("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp64Active, "fp64_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp64")"),
   DcgmDouble("DCGM_FI_PROF_PIPE_FP64_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp32Active, "fp32_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp32")"),
   DcgmDouble("DCGM_FI_PROF_PIPE_FP32_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kFp16Active, "fp16_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_pipe_active_ratio", kGauge, kPercentToRatio, R"(pipe="fp16")"),
   DcgmDouble("DCGM_FI_PROF_PIPE_FP16_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles an execution pipe was active (GPM)."},
  {kDramActive, "dram_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_dram_active_ratio", kGauge, kPercentToRatio),
   DcgmDouble("DCGM_FI_PROF_DRAM_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of cycles the device memory interface was sending or receiving data (GPM)."},
  {kGrEngineActive, "gr_engine_active", kWork, kFast, kGpm, 0,
   Native("gpuscope_graphics_engine_active_ratio", kGauge, kPercentToRatio),
   DcgmDouble("DCGM_FI_PROF_GR_ENGINE_ACTIVE", kGauge, kPercentToRatio), kNoSmi,
   "Ratio of time the graphics (compute) engine was active (GPM)."},
  {kBusySeconds, "busy_seconds", kWork, kDerived, kIntegral, 0,
   Native("gpuscope_gpu_busy_seconds_total", kCounter), kNoDcgm, kNoSmi,
   "Seconds a kernel was running, integrated between samples (utilization x time)."},
  {kIdleSeconds, "idle_seconds", kWork, kDerived, kIntegral, 0,
   Native("gpuscope_gpu_idle_seconds_total", kCounter), kNoDcgm, kNoSmi,
   "Seconds the GPU ran no kernel at all (utilization 0), integrated between samples."},
  {kSmActiveSeconds, "sm_active_seconds", kWork, kDerived, kIntegral, 0,
   Native("gpuscope_sm_active_seconds_total", kCounter), kNoDcgm, kNoSmi,
   "SM-active seconds (SM activity x time) integrated between samples (GPM)."},

  // Memory.
  {kMemoryTotal, "memory_total", kMemory, kSlow, kMemoryInfo, 0,
   Native("gpuscope_memory_total_bytes", kGauge), Dcgm("DCGM_FI_DEV_FB_TOTAL", kGauge, kBytesToMiB),
   Smi("memory.total", "MiB", SmiFormat::kInteger, kBytesToMiB), "Framebuffer memory installed."},
  {kMemoryUsed, "memory_used", kMemory, kFast, kMemoryInfo, 0,
   Native("gpuscope_memory_used_bytes", kGauge), Dcgm("DCGM_FI_DEV_FB_USED", kGauge, kBytesToMiB),
   Smi("memory.used", "MiB", SmiFormat::kInteger, kBytesToMiB),
   "Framebuffer memory allocated by processes (reserved excluded)."},
  {kMemoryFree, "memory_free", kMemory, kFast, kMemoryInfo, 0,
   Native("gpuscope_memory_free_bytes", kGauge), Dcgm("DCGM_FI_DEV_FB_FREE", kGauge, kBytesToMiB),
   Smi("memory.free", "MiB", SmiFormat::kInteger, kBytesToMiB), "Framebuffer memory free."},
  {kMemoryReserved, "memory_reserved", kMemory, kSlow, kMemoryInfo, 0,
   Native("gpuscope_memory_reserved_bytes", kGauge),
   Dcgm("DCGM_FI_DEV_FB_RESERVED", kGauge, kBytesToMiB),
   Smi("memory.reserved", "MiB", SmiFormat::kInteger, kBytesToMiB),
   "Framebuffer memory reserved by the driver and firmware."},
  {kMemoryUsedPeak, "memory_used_peak", kMemory, kDerived, kPeak, 0,
   Native("gpuscope_memory_used_peak_bytes", kGauge), kNoDcgm, kNoSmi,
   "Highest framebuffer memory used over the trailing window."},

  // Energy and clocks.
  {kPowerUsage, "power_usage", kEnergy, kFast, kPower, 0,
   Native("gpuscope_power_usage_watts", kGauge), DcgmDouble("DCGM_FI_DEV_POWER_USAGE", kGauge),
   Smi("power.draw", "W", SmiFormat::kWatts), "Power draw (1 s average on Ampere and newer)."},
  {kPowerAverage, "power_average", kEnergy, kFast, kFieldValue, 185, kNoNative, kNoDcgm,
   Smi("power.draw.average", "W", SmiFormat::kWatts), "Power draw averaged over one second."},
  {kPowerInstant, "power_instant", kEnergy, kFast, kFieldValue, 186, kNoNative,
   DcgmDouble("DCGM_FI_DEV_POWER_USAGE_INSTANT", kGauge),
   Smi("power.draw.instant", "W", SmiFormat::kWatts), "Instantaneous power draw."},
  {kEnergyConsumption, "energy", kEnergy, kFast, kFieldValue, 83,
   Native("gpuscope_energy_joules_total", kCounter, kMilliToUnit),
   Dcgm("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", kCounter), kNoSmi,
   "Energy consumed since the driver loaded (integral of power)."},
  {kPowerLimit, "power_limit", kEnergy, kSlow, kPowerLimits, 0,
   Native("gpuscope_power_limit_watts", kGauge), DcgmDouble("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", kGauge),
   Smi("enforced.power.limit", "W", SmiFormat::kWatts), "Power limit the GPU enforces now."},
  {kPowerManagementLimit, "power_management_limit", kEnergy, kSlow, kPowerLimits, 0, kNoNative,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT", kGauge), Smi("power.limit", "W", SmiFormat::kWatts),
   "Power management limit set by the administrator."},
  {kPowerDefaultLimit, "power_default_limit", kEnergy, kSlow, kPowerLimits, 0, kNoNative,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", kGauge),
   Smi("power.default_limit", "W", SmiFormat::kWatts), "Default power management limit."},
  {kPowerMinLimit, "power_min_limit", kEnergy, kSlow, kPowerLimits, 0, kNoNative,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN", kGauge),
   Smi("power.min_limit", "W", SmiFormat::kWatts), "Lowest settable power limit."},
  {kPowerMaxLimit, "power_max_limit", kEnergy, kSlow, kPowerLimits, 0, kNoNative,
   DcgmDouble("DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX", kGauge),
   Smi("power.max_limit", "W", SmiFormat::kWatts), "Highest settable power limit."},
  {kSmClock, "sm_clock", kEnergy, kFast, kClocks, 0,
   Native("gpuscope_sm_clock_hertz", kGauge, kMegaToUnit), Dcgm("DCGM_FI_DEV_SM_CLOCK", kGauge),
   Smi("clocks.current.sm", "MHz"), "SM clock frequency."},
  {kMemClock, "mem_clock", kEnergy, kFast, kClocks, 0,
   Native("gpuscope_memory_clock_hertz", kGauge, kMegaToUnit), Dcgm("DCGM_FI_DEV_MEM_CLOCK", kGauge),
   Smi("clocks.current.memory", "MHz"), "Memory clock frequency."},
  {kGraphicsClock, "graphics_clock", kEnergy, kFast, kClocks, 0, kNoNative, kNoDcgm,
   Smi("clocks.current.graphics", "MHz"), "Graphics clock frequency."},
  {kVideoClock, "video_clock", kEnergy, kFast, kClocks, 0, kNoNative,
   Dcgm("DCGM_FI_DEV_VIDEO_CLOCK", kGauge), Smi("clocks.current.video", "MHz"),
   "Video clock frequency."},
  {kMaxSmClock, "max_sm_clock", kEnergy, kSlow, kMaxClocks, 0,
   Native("gpuscope_sm_clock_max_hertz", kGauge, kMegaToUnit), Dcgm("DCGM_FI_DEV_MAX_SM_CLOCK", kGauge),
   Smi("clocks.max.sm", "MHz"), "Maximum SM clock frequency."},
  {kMaxMemClock, "max_mem_clock", kEnergy, kSlow, kMaxClocks, 0, kNoNative,
   Dcgm("DCGM_FI_DEV_MAX_MEM_CLOCK", kGauge), Smi("clocks.max.memory", "MHz"),
   "Maximum memory clock frequency."},
  {kMaxGraphicsClock, "max_graphics_clock", kEnergy, kSlow, kMaxClocks, 0, kNoNative, kNoDcgm,
   Smi("clocks.max.graphics", "MHz"), "Maximum graphics clock frequency."},
  {kPState, "pstate", kEnergy, kFast, kPerformanceState, 0,
   Native("gpuscope_performance_state", kGauge), kNoDcgm, Smi("pstate", "", SmiFormat::kPState),
   "Performance state: 0 (maximum) to 15 (minimum)."},
  {kClockReasons, "clock_reasons", kEnergy, kFast, kClockEventReasons, 0, kNoNative,
   Dcgm("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", kGauge),
   Smi("clocks_event_reasons.active", "", SmiFormat::kHex64),
   "Bitmask of the reasons the clocks are held down now."},
  {kClockReasonsSupported, "clock_reasons_supported", kEnergy, kSlow, kClockEventReasons, 0, kNoNative,
   kNoDcgm, Smi("clocks_event_reasons.supported", "", SmiFormat::kHex64),
   "Bitmask of the clock event reasons this GPU reports."},
  {kThrottleGpuIdle, "throttle_gpu_idle", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="gpu_idle")"),
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleAppClocks, "throttle_applications_clocks", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="applications_clocks_setting")"),
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSwPowerCap, "throttle_sw_power_cap", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="sw_power_cap")"),
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwSlowdown, "throttle_hw_slowdown", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="hw_slowdown")"),
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSyncBoost, "throttle_sync_boost", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity, R"(reason="sync_boost")"),
   kNoDcgm, Smi("clocks_event_reasons_counters.sync_boost", "us", SmiFormat::kInteger, kUnitToMicro),
   "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleSwThermal, "throttle_sw_thermal", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="sw_thermal_slowdown")"),
   kNoDcgm,
   Smi("clocks_event_reasons_counters.sw_thermal_slowdown", "us", SmiFormat::kInteger, kUnitToMicro),
   "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwThermal, "throttle_hw_thermal", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="hw_thermal_slowdown")"),
   kNoDcgm,
   Smi("clocks_event_reasons_counters.hw_thermal_slowdown", "us", SmiFormat::kInteger, kUnitToMicro),
   "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleHwPowerBrake, "throttle_hw_power_brake", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="hw_power_brake_slowdown")"),
   kNoDcgm,
   Smi("clocks_event_reasons_counters.hw_power_brake_slowdown", "us", SmiFormat::kInteger,
       kUnitToMicro),
   "Seconds the clocks were held down, by reason, integrated between samples."},
  {kThrottleDisplayClock, "throttle_display_clock", kEnergy, kDerived, kIntegral, 0,
   Native("gpuscope_clock_throttle_seconds_total", kCounter, kIdentity,
          R"(reason="display_clock_setting")"),
   kNoDcgm, kNoSmi, "Seconds the clocks were held down, by reason, integrated between samples."},

  // Temperature.
  {kGpuTemp, "gpu_temp", kHealth, kFast, kTemperature, 0,
   Native("gpuscope_gpu_temperature_celsius", kGauge), Dcgm("DCGM_FI_DEV_GPU_TEMP", kGauge),
   Smi("temperature.gpu", ""), "GPU die temperature."},
  {kGpuTempPeak, "gpu_temp_peak", kHealth, kDerived, kPeak, 0,
   Native("gpuscope_gpu_temperature_peak_celsius", kGauge), kNoDcgm, kNoSmi,
   "Highest GPU temperature over the trailing window."},
  {kMemoryTemp, "memory_temp", kHealth, kFast, kFieldValue, 82,
   Native("gpuscope_memory_temperature_celsius", kGauge), Dcgm("DCGM_FI_DEV_MEMORY_TEMP", kGauge),
   Smi("temperature.memory", ""), "HBM temperature."},
  {kSlowdownTemp, "slowdown_temp", kHealth, kSlow, kThresholds, 0,
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity, R"(threshold="slowdown")"),
   Dcgm("DCGM_FI_DEV_SLOWDOWN_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kShutdownTemp, "shutdown_temp", kHealth, kSlow, kThresholds, 0,
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity, R"(threshold="shutdown")"),
   Dcgm("DCGM_FI_DEV_SHUTDOWN_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kGpuMaxTemp, "gpu_max_temp", kHealth, kSlow, kThresholds, 0,
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity,
          R"(threshold="gpu_max_operating")"),
   Dcgm("DCGM_FI_DEV_GPU_MAX_OP_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kMemoryMaxTemp, "memory_max_temp", kHealth, kSlow, kThresholds, 0,
   Native("gpuscope_temperature_threshold_celsius", kGauge, kIdentity,
          R"(threshold="memory_max_operating")"),
   Dcgm("DCGM_FI_DEV_MEM_MAX_OP_TEMP", kGauge), kNoSmi,
   "Temperature thresholds: the GPU slows its clocks at slowdown and powers off at shutdown."},
  {kFanSpeed, "fan_speed", kHealth, kSlow, kFan, 0,
   Native("gpuscope_fan_speed_ratio", kGauge, kPercentToRatio), Dcgm("DCGM_FI_DEV_FAN_SPEED", kGauge),
   Smi("fan.speed", "%"), "Fan speed relative to its maximum."},

  // Interconnect.
  {kPcieLinkGen, "pcie_link_gen", kInterconnect, kSlow, kPcieLink, 0,
   Native("gpuscope_pcie_link_generation", kGauge), Dcgm("DCGM_FI_DEV_PCIE_LINK_GEN", kGauge),
   Smi("pcie.link.gen.current", ""), "Current PCIe link generation."},
  {kPcieLinkGenMax, "pcie_link_gen_max", kInterconnect, kSlow, kPcieLink, 0,
   Native("gpuscope_pcie_link_generation_max", kGauge), Dcgm("DCGM_FI_DEV_PCIE_MAX_LINK_GEN", kGauge),
   Smi("pcie.link.gen.max", ""), "Highest PCIe link generation the GPU and system support."},
  {kPcieLinkWidth, "pcie_link_width", kInterconnect, kSlow, kPcieLink, 0,
   Native("gpuscope_pcie_link_width", kGauge), Dcgm("DCGM_FI_DEV_PCIE_LINK_WIDTH", kGauge),
   Smi("pcie.link.width.current", ""), "Current PCIe link width (lanes)."},
  {kPcieLinkWidthMax, "pcie_link_width_max", kInterconnect, kSlow, kPcieLink, 0,
   Native("gpuscope_pcie_link_width_max", kGauge), Dcgm("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", kGauge),
   Smi("pcie.link.width.max", ""), "Widest PCIe link the GPU and system support (lanes)."},
  {kPcieTxBytesRate, "pcie_tx_rate", kInterconnect, kPcie, kPcieThroughput, 0, kNoNative,
   DcgmDouble("DCGM_FI_PROF_PCIE_TX_BYTES", kGauge), kNoSmi,
   "PCIe bytes transmitted per second, headers included."},
  {kPcieRxBytesRate, "pcie_rx_rate", kInterconnect, kPcie, kPcieThroughput, 0, kNoNative,
   DcgmDouble("DCGM_FI_PROF_PCIE_RX_BYTES", kGauge), kNoSmi,
   "PCIe bytes received per second, headers included."},
  {kPcieTxBytes, "pcie_tx_bytes", kInterconnect, kDerived, kIntegral, 0,
   Native("gpuscope_pcie_bytes_total", kCounter, kIdentity, R"(direction="tx")"), kNoDcgm, kNoSmi,
   "PCIe bytes moved, integrated from the throughput samples."},
  {kPcieRxBytes, "pcie_rx_bytes", kInterconnect, kDerived, kIntegral, 0,
   Native("gpuscope_pcie_bytes_total", kCounter, kIdentity, R"(direction="rx")"), kNoDcgm, kNoSmi,
   "PCIe bytes moved, integrated from the throughput samples."},
  {kPcieReplays, "pcie_replays", kHealth, kSlow, kFieldValue, 94,
   Native("gpuscope_pcie_replays_total", kCounter), Dcgm("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", kCounter),
   kNoSmi, "PCIe link retries (replays); a rising rate means a marginal link."},
  {kNvLinkTxBytesRate, "nvlink_tx_rate", kInterconnect, kFast, kGpm, 0, kNoNative,
   DcgmDouble("DCGM_FI_PROF_NVLINK_TX_BYTES", kGauge), kNoSmi,
   "NVLink bytes transmitted per second, all links (GPM)."},
  {kNvLinkRxBytesRate, "nvlink_rx_rate", kInterconnect, kFast, kGpm, 0, kNoNative,
   DcgmDouble("DCGM_FI_PROF_NVLINK_RX_BYTES", kGauge), kNoSmi,
   "NVLink bytes received per second, all links (GPM)."},
  {kNvLinkTxBytes, "nvlink_tx_bytes", kInterconnect, kFast, kNvLinkThroughput, 138,
   Native("gpuscope_nvlink_bytes_total", kCounter, kIdentity, R"(direction="tx")"), kNoDcgm, kNoSmi,
   "NVLink data bytes moved, all links."},
  {kNvLinkRxBytes, "nvlink_rx_bytes", kInterconnect, kFast, kNvLinkThroughput, 139,
   Native("gpuscope_nvlink_bytes_total", kCounter, kIdentity, R"(direction="rx")"), kNoDcgm, kNoSmi,
   "NVLink data bytes moved, all links."},
  {kNvLinkBandwidthTotal, "nvlink_bandwidth_total", kInterconnect, kFast, kNvLinkThroughput, 0,
   kNoNative, Dcgm("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", kCounter), kNoSmi,
   "NVLink bytes moved, transmitted and received, all links."},

  // Health.
  {kNvLinkCrcFlitErrors, "nvlink_crc_flit_errors", kHealth, kSlow, kFieldValue, 38,
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="crc_flit")"),
   Dcgm("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkCrcDataErrors, "nvlink_crc_data_errors", kHealth, kSlow, kFieldValue, 45,
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="crc_data")"),
   Dcgm("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkReplayErrors, "nvlink_replay_errors", kHealth, kSlow, kFieldValue, 52,
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="replay")"),
   Dcgm("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kNvLinkRecoveryErrors, "nvlink_recovery_errors", kHealth, kSlow, kFieldValue, 59,
   Native("gpuscope_nvlink_errors_total", kCounter, kIdentity, R"(type="recovery")"),
   Dcgm("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", kCounter), kNoSmi,
   "NVLink errors, all links, by type."},
  {kEccMode, "ecc_mode", kHealth, kSlow, kFieldValue, 1,
   Native("gpuscope_ecc_enabled", kGauge), kNoDcgm, Smi("ecc.mode.current", "", SmiFormat::kEnabled),
   "1 when ECC is enabled."},
  {kEccModePending, "ecc_mode_pending", kHealth, kSlow, kFieldValue, 2, kNoNative, kNoDcgm,
   Smi("ecc.mode.pending", "", SmiFormat::kEnabled), "ECC mode after the next reboot."},
  {kEccSbeVolatile, "ecc_sbe_volatile", kHealth, kSlow, kFieldValue, 3,
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity, R"(error="corrected",scope="volatile")"),
   Dcgm("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", kCounter), Smi("ecc.errors.corrected.volatile.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccDbeVolatile, "ecc_dbe_volatile", kHealth, kSlow, kFieldValue, 4,
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity,
          R"(error="uncorrected",scope="volatile")"),
   Dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", kCounter), Smi("ecc.errors.uncorrected.volatile.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccSbeAggregate, "ecc_sbe_aggregate", kHealth, kSlow, kFieldValue, 5,
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity, R"(error="corrected",scope="aggregate")"),
   Dcgm("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", kCounter), Smi("ecc.errors.corrected.aggregate.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kEccDbeAggregate, "ecc_dbe_aggregate", kHealth, kSlow, kFieldValue, 6,
   Native("gpuscope_ecc_errors_total", kCounter, kIdentity,
          R"(error="uncorrected",scope="aggregate")"),
   Dcgm("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", kCounter),
   Smi("ecc.errors.uncorrected.aggregate.total", ""),
   "ECC errors: volatile since the driver loaded, aggregate over the GPU's life."},
  {kRetiredSbe, "retired_sbe", kHealth, kSlow, kFieldValue, 29,
   Native("gpuscope_retired_pages_total", kCounter, kIdentity, R"(cause="multiple_sbe")"),
   Dcgm("DCGM_FI_DEV_RETIRED_SBE", kCounter), Smi("retired_pages.single_bit_ecc.count", ""),
   "Memory pages retired, by cause (pre-Ampere GPUs; Ampere and newer remap rows)."},
  {kRetiredDbe, "retired_dbe", kHealth, kSlow, kFieldValue, 30,
   Native("gpuscope_retired_pages_total", kCounter, kIdentity, R"(cause="dbe")"),
   Dcgm("DCGM_FI_DEV_RETIRED_DBE", kCounter), Smi("retired_pages.double_bit.count", ""),
   "Memory pages retired, by cause (pre-Ampere GPUs; Ampere and newer remap rows)."},
  {kRetiredPending, "retired_pending", kHealth, kSlow, kFieldValue, 31,
   Native("gpuscope_retired_pages_pending", kGauge), Dcgm("DCGM_FI_DEV_RETIRED_PENDING", kCounter),
   Smi("retired_pages.pending", "", SmiFormat::kYesNo),
   "1 when a page retirement waits for the next GPU reset."},
  {kRemappedCorrectable, "remapped_correctable", kHealth, kSlow, kFieldValue, 142,
   Native("gpuscope_remapped_rows_total", kCounter, kIdentity, R"(cause="correctable")"),
   Dcgm("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", kCounter), Smi("remapped_rows.correctable", ""),
   "Memory rows remapped, by the kind of error that caused it."},
  {kRemappedUncorrectable, "remapped_uncorrectable", kHealth, kSlow, kFieldValue, 143,
   Native("gpuscope_remapped_rows_total", kCounter, kIdentity, R"(cause="uncorrectable")"),
   Dcgm("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", kCounter), Smi("remapped_rows.uncorrectable", ""),
   "Memory rows remapped, by the kind of error that caused it."},
  {kRemappedPending, "remapped_pending", kHealth, kSlow, kFieldValue, 144,
   Native("gpuscope_remapped_rows_pending", kGauge), Dcgm("DCGM_FI_DEV_ROW_REMAP_PENDING", kGauge),
   Smi("remapped_rows.pending", "", SmiFormat::kYesNo),
   "1 when a row remap waits for the next GPU reset."},
  {kRemappedFailure, "remapped_failure", kHealth, kSlow, kFieldValue, 145,
   Native("gpuscope_remapped_rows_failure", kGauge), Dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", kGauge),
   Smi("remapped_rows.failure", "", SmiFormat::kYesNo),
   "1 when a row remap failed: the GPU needs service."},
  {kPowerViolation, "power_violation", kHealth, kSlow, kFieldValue, 74,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="power")"),
   Dcgm("DCGM_FI_DEV_POWER_VIOLATION", kCounter),
   Smi("clocks_event_reasons_counters.sw_power_cap", "us", SmiFormat::kInteger, kNanoToMicro),
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kThermalViolation, "thermal_violation", kHealth, kSlow, kFieldValue, 75,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="thermal")"),
   Dcgm("DCGM_FI_DEV_THERMAL_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kSyncBoostViolation, "sync_boost_violation", kHealth, kSlow, kFieldValue, 76,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit, R"(policy="sync_boost")"),
   Dcgm("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kBoardLimitViolation, "board_limit_violation", kHealth, kSlow, kFieldValue, 77,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="board_limit")"),
   Dcgm("DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kLowUtilViolation, "low_util_violation", kHealth, kSlow, kFieldValue, 78,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="low_utilization")"),
   Dcgm("DCGM_FI_DEV_LOW_UTIL_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kReliabilityViolation, "reliability_violation", kHealth, kSlow, kFieldValue, 79,
   Native("gpuscope_clock_violation_seconds_total", kCounter, kNanoToUnit,
          R"(policy="reliability")"),
   Dcgm("DCGM_FI_DEV_RELIABILITY_VIOLATION", kCounter), kNoSmi,
   "Seconds the clocks were held below target, by the driver's performance policy."},
  {kRecoveryAction, "recovery_action", kHealth, kSlow, kFieldValue, 230,
   Native("gpuscope_gpu_recovery_action", kGauge), kNoDcgm, Smi("gpu_recovery_action", ""),
   "Action the driver asks for: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset."},
  {kXidLast, "xid_last", kHealth, kEvent, kEvents, 0, kNoNative,
   Dcgm("DCGM_FI_DEV_XID_ERRORS", kGauge), kNoSmi,
   "Value of the last XID error seen (see gpuscope_xid_errors_total for counts by code)."},
}};
// clang-format on

namespace {

constexpr bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}
constexpr bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i], i == 0)) return false;
  }
  return true;
}
constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// Prometheus conventions for native names: a gpuscope_ prefix, counters end
// in _total, and a base unit (or a dimensionless name) is part of the name.
constexpr bool ValidNative(const NativeName& n) {
  if (n.name.empty()) return true;
  if (!ValidName(n.name) || n.name.substr(0, 9) != "gpuscope_") return false;
  if ((n.type == MetricType::kCounter) != EndsWith(n.name, "_total")) return false;
  constexpr std::string_view kUnits[] = {
      "_ratio",   "_bytes",   "_watts",      "_joules",         "_hertz", "_celsius",
      "_seconds", "_total",   "_generation", "_generation_max", "_width", "_width_max",
      "_state",   "_pending", "_failure",    "_enabled",        "_action"};
  for (std::string_view unit : kUnits) {
    if (EndsWith(n.name, unit)) return true;
  }
  return false;
}
constexpr bool ValidCatalog(const std::array<MetricDef, kMetricCount>& rows) {
  std::array<int, kMetricCount> seen{};
  for (const MetricDef& def : rows) {
    if (++seen[Index(def.id)] != 1) return false;
    if (!ValidNative(def.native)) return false;
    if (!def.dcgm.name.empty() && !ValidName(def.dcgm.name)) return false;
    if (def.source == Source::kFieldValue && def.field_id == 0) return false;
  }
  // Rows of one native family are adjacent, so the family is written once.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 2; j < rows.size(); ++j) {
      if (!rows[i].native.name.empty() && rows[i].native.name == rows[j].native.name &&
          rows[j - 1].native.name != rows[i].native.name) {
        return false;
      }
    }
  }
  return true;
}
static_assert(ValidCatalog(kRows), "catalog: bad name, duplicate id or split family");

}  // namespace

const std::array<MetricDef, kMetricCount> kCatalog = kRows;

const std::array<ClockReasonDef, 9> kClockReasonTable = {{
    {0x1, Metric::kThrottleGpuIdle, "gpu_idle", "gpu_idle"},
    {0x2, Metric::kThrottleAppClocks, "applications_clocks_setting", "applications_clocks_setting"},
    {0x4, Metric::kThrottleSwPowerCap, "sw_power_cap", "sw_power_cap"},
    {0x8, Metric::kThrottleHwSlowdown, "hw_slowdown", "hw_slowdown"},
    {0x10, Metric::kThrottleSyncBoost, "sync_boost", "sync_boost"},
    {0x20, Metric::kThrottleSwThermal, "sw_thermal_slowdown", "sw_thermal_slowdown"},
    {0x40, Metric::kThrottleHwThermal, "hw_thermal_slowdown", "hw_thermal_slowdown"},
    {0x80, Metric::kThrottleHwPowerBrake, "hw_power_brake_slowdown", "hw_power_brake_slowdown"},
    {0x100, Metric::kThrottleDisplayClock, "display_clock_setting", "display_clock_setting"},
}};

const MetricDef& Def(Metric m) {
  static const auto by_id = [] {
    std::array<const MetricDef*, kMetricCount> index{};
    for (const MetricDef& def : kCatalog) index[Index(def.id)] = &def;
    return index;
  }();
  return *by_id[Index(m)];
}

namespace {
template <typename Key>
std::optional<Metric> Find(std::string_view wanted, Key key) {
  if (wanted.empty()) return std::nullopt;
  for (const MetricDef& def : kCatalog) {
    if (key(def) == wanted) return def.id;
  }
  return std::nullopt;
}
}  // namespace

std::optional<Metric> FindByKey(std::string_view key) {
  return Find(key, [](const MetricDef& d) { return d.key; });
}
std::optional<Metric> FindByDcgmName(std::string_view name) {
  return Find(name, [](const MetricDef& d) { return d.dcgm.name; });
}
std::optional<Metric> FindBySmiName(std::string_view name) {
  return Find(name, [](const MetricDef& d) { return d.smi.name; });
}

double Convert(double stored, Scale scale) {
  switch (scale) {
    case Scale::kIdentity:
      return stored;
    case Scale::kPercentToRatio:
      return stored / 100.0;
    case Scale::kMilliToUnit:
      return stored / 1000.0;
    case Scale::kUnitToMilli:
      return stored * 1000.0;
    case Scale::kMegaToUnit:
      return stored * 1e6;
    case Scale::kBytesToMiB:
      return std::floor(stored / 1048576.0);
    case Scale::kNanoToUnit:
      return stored / 1e9;
    case Scale::kNanoToMicro:
      return std::floor(stored / 1e3);
    case Scale::kUnitToMicro:
      return std::floor(stored * 1e6);
  }
  return stored;
}

}  // namespace gpuscope
