#include "gpuscope/catalog.h"

#include <cmath>
#include <string>

#include "collect/catalog_rows.h"
#include "gpuscope/metric_names.h"

namespace gpuscope {

using catalog_rows::kRows;

namespace {

// Prometheus conventions for native names (gpuscope/metric_names.h).
constexpr bool ValidNative(const NativeName& n) {
  return n.name.empty() || metric_names::ValidNative(n.name, n.type == MetricType::kCounter);
}
constexpr bool ValidCatalog(const std::array<MetricDef, kMetricCount>& rows) {
  std::array<int, kMetricCount> seen{};
  for (const MetricDef& def : rows) {
    if (++seen[Index(def.id)] != 1) return false;
    if (!ValidNative(def.native)) return false;
    if (!def.dcgm.name.empty() && !metric_names::Valid(def.dcgm.name)) return false;
    if (!def.dcgm.alias.empty() && !metric_names::Valid(def.dcgm.alias)) return false;
    const bool batched =
        def.source == Source::kFieldValue || def.source == Source::kNvLinkThroughput;
    if (def.source == Source::kFieldValue && def.read.field.id == 0) return false;
    if (!batched && def.read.field.id != 0) return false;
    // GPM ids: kGpm rows, and the PCIe rates GPM gives in place of their call.
    const bool gpm = def.source == Source::kGpm || def.source == Source::kPcieThroughput;
    if (def.source == Source::kGpm && def.read.gpm.id == 0) return false;
    if (!gpm && def.read.gpm.id != 0) return false;
    // Readers that take the call and its argument from the row need one.
    const bool by_call = def.source == Source::kClocks || def.source == Source::kMaxClocks ||
                         def.source == Source::kThresholds;
    if (by_call == def.read.call.name.empty()) return false;
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
static_assert(
    ValidCatalog(kRows),
    "catalog: bad name, duplicate id, split family or a read that does not fit the source");

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
  if (std::optional<Metric> m = Find(name, [](const MetricDef& d) { return d.dcgm.name; }))
    return m;
  return Find(name, [](const MetricDef& d) { return d.dcgm.alias; });
}
std::optional<Metric> FindBySmiName(std::string_view name) {
  return Find(name, [](const MetricDef& d) { return d.smi.name; });
}

namespace {
// The NVML call (or derivation) behind each Source; -Wswitch names a Source
// added without one.
std::string_view SourceCall(Source source) {
  switch (source) {
    case Source::kFieldValue:
    case Source::kNvLinkThroughput:
      return "nvmlDeviceGetFieldValues";
    case Source::kUtilization:
      return "nvmlDeviceGetUtilizationRates";
    case Source::kEncoder:
      return "nvmlDeviceGetEncoderUtilization";
    case Source::kDecoder:
      return "nvmlDeviceGetDecoderUtilization";
    case Source::kMemoryInfo:
      return "nvmlDeviceGetMemoryInfo_v2";
    case Source::kTemperature:
      return "nvmlDeviceGetTemperature";
    case Source::kThresholds:
      return "nvmlDeviceGetTemperatureThreshold";
    case Source::kPower:
      return "nvmlDeviceGetPowerUsage";
    case Source::kPowerLimits:
      return "nvmlDeviceGetEnforcedPowerLimit and nvmlDeviceGetPowerManagement*";
    case Source::kClocks:
      return "nvmlDeviceGetClockInfo";
    case Source::kMaxClocks:
      return "nvmlDeviceGetMaxClockInfo";
    case Source::kClockEventReasons:
      return "nvmlDeviceGetCurrentClocksEventReasons";
    case Source::kFan:
      return "nvmlDeviceGetFanSpeed";
    case Source::kPerformanceState:
      return "nvmlDeviceGetPerformanceState";
    case Source::kPcieLink:
      return "nvmlDeviceGetCurrPcieLink* / GetMaxPcieLink*";
    case Source::kBar1:
      return "nvmlDeviceGetBAR1MemoryInfo";
    case Source::kFabric:
      return "nvmlDeviceGetGpuFabricInfoV";
    case Source::kModes:
      return "nvmlDeviceGetComputeMode / GetPersistenceMode / GetVirtualizationMode";
    case Source::kGpuCount:
      return "nvmlDeviceGetCount_v2";
    case Source::kInforom:
      return "nvmlDeviceGetInforomConfigurationChecksum / ValidateInforom";
    case Source::kVgpuLicense:
      return "nvmlDeviceGetGridLicensableFeatures_v4 (in a vGPU guest: virtualization mode 2)";
    case Source::kVgpuScheduler:
      return "nvmlDeviceGetVgpuSchedulerState / GetVgpuSchedulerLog (on a vGPU host: mode 3)";
    case Source::kPcieThroughput:
      return "GPM PCIe rates, else nvmlDeviceGetPcieThroughput";
    case Source::kGpm:
      return "GPM (nvmlGpmMetricsGet)";
    case Source::kIntegral:
      return "gpuscope: integral between samples";
    case Source::kPeak:
      return "gpuscope: trailing-window maximum";
    case Source::kEvents:
      return "XID events (nvmlEventSetWait_v2)";
  }
  return "";
}
}  // namespace

std::string SourceText(const MetricDef& def) {
  std::string text(SourceCall(def.source));
  if (def.read.field.id != 0) text += " field " + std::to_string(def.read.field.id);
  if (def.read.field.min_driver != 0) {
    text += " (driver " + std::to_string(def.read.field.min_driver) + "+)";
  }
  return text;
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
    case Scale::kKibiToUnit:
      return stored * 1024.0;
  }
  return stored;
}

}  // namespace gpuscope
