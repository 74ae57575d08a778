// The metric catalog: one constexpr table describes every per-GPU metric
// (DESIGN principle 5). The sampler reads it to know what to fetch and how
// often, the exporter to name and type series, the query CLI to print
// nvidia-smi columns, docs/metrics.md is generated from it. A row owns every
// fact about its metric: how it is read, its names, its lean-profile policy
// (required), its help. Adding a metric is one X() entry below and one row in
// src/collect/catalog_rows.h (a field-value metric also one line in the
// simulator, sim/exports_fields.cc); only a new NVML call (a new Source) also
// needs a reader in src/collect. docs/adding-a-metric.md walks it.
//
// Values are stored in the unit NVML reports (percent, MHz, bytes, milliwatts
// as watts, ...) so that integer readings stay exact; each output converts with
// its Scale. Thread safety: immutable, constexpr.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope {

// Health and efficiency are kept apart (separate panels, alerts, audiences).
enum class Category : uint8_t { kInventory, kWork, kMemory, kEnergy, kHealth, kInterconnect };

// Cadence tiers of the sampler.
enum class Tier : uint8_t {
  kFast,     // default 1 s: utilization, memory, power, clocks, temperature, GPM
  kSlow,     // default 10 s: ECC, retired pages, remapped rows, limits, link state
  kPcie,     // own cadence: nvmlDeviceGetPcieThroughput blocks ~20 ms per call
  kDerived,  // computed by the sampler from other metrics (integrals, peaks)
  kEvent,    // set by the event thread (XID)
};

enum class MetricType : uint8_t { kGauge, kCounter };

// How a stored value becomes an output value.
enum class Scale : uint8_t {
  kIdentity,
  kPercentToRatio,  // / 100
  kMilliToUnit,     // / 1000 (mJ -> J)
  kUnitToMilli,     // * 1000 (J -> mJ)
  kMegaToUnit,      // * 1e6 (MHz -> Hz)
  kBytesToMiB,      // / 2^20, floored (dcgm-exporter and nvidia-smi print whole MiB)
  kNanoToUnit,      // / 1e9 (ns -> s)
  kNanoToMicro,     // / 1e3 (ns -> us)
  kUnitToMicro,     // * 1e6 (s -> us)
  kKibiToUnit,      // * 1024 (KiB -> bytes)
};

// How nvidia-smi prints a value (reference/nvidia-smi-compat.md).
enum class SmiFormat : uint8_t {
  kNone,     // no --query-gpu column
  kInteger,  // "45 %", "1234 MiB", "56"
  kWatts,    // two decimals: "69.85 W"
  kHex64,    // "0x00000000000001FF"
  kPState,   // "P0"
  kEnabled,  // "Enabled" / "Disabled"
  kYesNo,    // "Yes" / "No"
};

// What NVML call (or derivation) yields a metric. The reader table in
// src/collect/readers_table.cc maps each source to its reader, and a
// static_assert there proves that every source a row names has one; a source
// may fill several metrics (memory info: four). Field-value rows carry their
// id, scope and unit in the row, so they need no reader code of their own.
enum class Source : uint8_t {
  kFieldValue,  // batched nvmlDeviceGetFieldValues with field_id
  kUtilization,
  kEncoder,
  kDecoder,
  kMemoryInfo,
  kTemperature,
  kThresholds,
  kPower,
  kPowerLimits,
  kClocks,
  kMaxClocks,
  kClockEventReasons,
  kFan,
  kPerformanceState,
  kPcieLink,
  kBar1,              // nvmlDeviceGetBAR1MemoryInfo
  kModes,             // compute, persistence and virtualization modes
  kGpuCount,          // nvmlDeviceGetCount (the same on every GPU)
  kInforom,           // InfoROM checksum and validity
  kFabric,            // nvmlDeviceGetGpuFabricInfoV: NVLink fabric registration and health
  kVgpuLicense,       // in a vGPU guest: nvmlDeviceGetGridLicensableFeatures_v4
  kVgpuScheduler,     // on a vGPU host board: the scheduler's state and log
  kPcieThroughput,    // nvmlDeviceGetPcieThroughput, or GPM when supported
  kNvLinkThroughput,  // fields 138/139: cumulative KiB, tx and rx
  kGpm,
  kIntegral,  // sampler integral over time
  kPeak,      // sampler trailing-window maximum
  kEvents,    // event thread
};

// How a metric is read through nvmlDeviceGetFieldValues (kFieldValue rows,
// and kNvLinkThroughput rows batched with them). Ids: src/nvml/field_ids.h.
struct FieldRead {
  unsigned int id = 0;                 // NVML field id; 0: not read as a field value
  Scale to_stored = Scale::kIdentity;  // raw NVML value -> stored unit (mW -> W)
  bool all_links = false;              // NVLink counter summed over every link
  // Oldest driver branch asked for it (0: any): ids >= 251 meant other things
  // on older branches.
  unsigned int min_driver = 0;
};

// How a metric is read through GPM (nvmlGpmMetricsGet; kGpm rows, and the
// PCIe rates GPM gives in place of nvmlDeviceGetPcieThroughput). Ids:
// src/nvml/field_ids.h.
struct GpmRead {
  uint32_t id = 0;       // NVML_GPM_METRIC_*; 0: not read through GPM
  double to_stored = 1;  // GPM value -> stored unit (MiB/s -> bytes/s)
};

// A reader's NVML call for rows of one Source that differ only in an argument
// (clocks by domain, temperature thresholds by kind).
struct CallRead {
  std::string_view name;  // the call as the watchdog and refusals name it
  unsigned int arg = 0;   // its argument: a clock domain, a threshold kind
};

// Every way a row is read; the row's Source says which reader uses which part.
struct Read {
  FieldRead field;
  GpmRead gpm;
  CallRead call;
};

// What the lean profile (export/profile.h) does with a row's native series.
enum class LeanPolicy : uint8_t {
  kAlways,
  kSparse,    // only once its value has been non-zero
  kFullOnly,  // left out
  kNoGpm,     // only on a GPU without GPM DRAM activity (memory-copy utilization stands in)
};

// A row's lean policy: a required column. It has no default, so a row
// written without one does not compile (a default would silently leave the
// next row out of the default profile).
struct Lean {
  LeanPolicy policy;
  explicit constexpr Lean(LeanPolicy p) : policy(p) {}
};

struct NativeName {
  std::string_view name;    // gpuscope_*; rows sharing a name form one family
  std::string_view labels;  // fixed extra labels, e.g. reason="sw_power_cap"
  MetricType type;
  Scale scale;
};

struct DcgmName {
  std::string_view name;  // DCGM_FI_*; empty when dcgm-exporter has none
  MetricType type;
  Scale scale;
  bool integer;  // dcgm-exporter prints an integer field
  // A second DCGM name of the same field (DCGM renamed field 112
  // CLOCK_THROTTLE_REASONS to CLOCKS_EVENT_REASONS); a counters file may use either.
  std::string_view alias = {};
};

struct SmiName {
  std::string_view name;  // canonical --query-gpu name; empty when none
  std::string_view unit;  // "%", "MiB", "MHz", "W", "us"; empty when bare
  SmiFormat format;
  Scale scale;
};

// clang-format off
#define GPUSCOPE_METRICS(X)                                                             \
  X(kGpuUtil) X(kMemCopyUtil) X(kEncoderUtil) X(kDecoderUtil) X(kSmActive)              \
  X(kSmOccupancy) X(kTensorActive) X(kTensorHmmaActive) X(kDramActive)                  \
  X(kGrEngineActive) X(kFp64Active) X(kFp32Active) X(kFp16Active) X(kMemoryTotal)       \
  X(kMemoryUsed) X(kMemoryFree) X(kMemoryReserved) X(kMemoryUsedPeak) X(kPowerUsage)    \
  X(kPowerAverage) X(kPowerInstant) X(kEnergyConsumption) X(kPowerLimit)                \
  X(kPowerManagementLimit) X(kPowerDefaultLimit) X(kPowerMinLimit) X(kPowerMaxLimit)    \
  X(kSmClock) X(kMemClock) X(kGraphicsClock) X(kVideoClock) X(kMaxSmClock)              \
  X(kMaxMemClock) X(kMaxGraphicsClock) X(kClockReasons) X(kClockReasonsSupported)       \
  X(kPState) X(kGpuTemp) X(kMemoryTemp) X(kGpuTempPeak) X(kSlowdownTemp)                \
  X(kShutdownTemp) X(kGpuMaxTemp) X(kMemoryMaxTemp) X(kFanSpeed) X(kPcieLinkGen)        \
  X(kPcieLinkGenMax) X(kPcieLinkWidth) X(kPcieLinkWidthMax) X(kPcieTxBytesRate)         \
  X(kPcieRxBytesRate) X(kPcieTxBytes) X(kPcieRxBytes) X(kPcieReplays)                   \
  X(kNvLinkTxBytesRate) X(kNvLinkRxBytesRate) X(kNvLinkTxBytes) X(kNvLinkRxBytes)       \
  X(kNvLinkBandwidthTotal) X(kNvLinkCrcFlitErrors) X(kNvLinkCrcDataErrors)              \
  X(kNvLinkReplayErrors) X(kNvLinkRecoveryErrors) X(kEccMode) X(kEccModePending)        \
  X(kEccSbeVolatile) X(kEccDbeVolatile) X(kEccSbeAggregate) X(kEccDbeAggregate)         \
  X(kRetiredSbe) X(kRetiredDbe) X(kRetiredPending) X(kRemappedCorrectable)              \
  X(kRemappedUncorrectable) X(kRemappedPending) X(kRemappedFailure) X(kPowerViolation)  \
  X(kThermalViolation) X(kSyncBoostViolation) X(kBoardLimitViolation)                   \
  X(kLowUtilViolation) X(kReliabilityViolation) X(kSwThermalViolation)                 \
  X(kHwThermalViolation) X(kHwPowerBrakeViolation) X(kRecoveryAction) X(kXidLast)       \
  X(kBusySeconds) X(kIdleSeconds) X(kSmActiveSeconds) X(kThrottleGpuIdle)               \
  X(kThrottleAppClocks) X(kThrottleSwPowerCap) X(kThrottleHwSlowdown)                   \
  X(kThrottleSyncBoost) X(kThrottleSwThermal) X(kThrottleHwThermal)                     \
  X(kThrottleHwPowerBrake) X(kThrottleDisplayClock) X(kFbUsedRatio) X(kBar1Total)       \
  X(kBar1Used) X(kBar1Free) X(kDeviceCount) X(kComputeMode) X(kPersistenceMode)         \
  X(kVirtualizationMode) X(kInforomChecksum) X(kInforomValid)                          \
  X(kFabricManagerStatus) X(kFabricState) X(kFabricErrorCode) X(kFabricCliqueId)        \
  X(kFabricHealthMask) X(kFabricDegradedBandwidth) X(kFabricRouteRecovery)              \
  X(kFabricRouteUnhealthy) X(kFabricAccessTimeoutRecovery) X(kFabricIncorrectConfig)    \
  X(kVgpuLicensed) X(kVgpuLicenseState) X(kVgpuSchedulerPolicy) X(kVgpuSchedulerTimeslice) \
  X(kVgpuSchedulerRunlists) X(kVgpuSchedulerWait)
// clang-format on

enum class Metric : uint16_t {
#define GPUSCOPE_METRIC_ENUM(id) id,
  GPUSCOPE_METRICS(GPUSCOPE_METRIC_ENUM)
#undef GPUSCOPE_METRIC_ENUM
};
#define GPUSCOPE_METRIC_COUNT(id) +1
inline constexpr std::size_t kMetricCount = 0 GPUSCOPE_METRICS(GPUSCOPE_METRIC_COUNT);
#undef GPUSCOPE_METRIC_COUNT

struct MetricDef {
  Metric id;
  std::string_view key;  // stable short id for config, JSON and docs
  Category category;
  Tier tier;
  Source source;
  Read read;  // field id (kFieldValue, kNvLinkThroughput), GPM id, or call and argument
  NativeName native;
  Lean lean;  // required: what the lean profile does with the native series
  DcgmName dcgm;
  SmiName smi;
  std::string_view help;
};

// The rows, in export order (families of one native name are adjacent).
extern const std::array<MetricDef, kMetricCount> kCatalog;

constexpr std::size_t Index(Metric m) { return static_cast<std::size_t>(m); }
const MetricDef& Def(Metric m);
std::optional<Metric> FindByKey(std::string_view key);
std::optional<Metric> FindByDcgmName(std::string_view name);
std::optional<Metric> FindBySmiName(std::string_view name);

// Where a row's value comes from, for docs/metrics.md: the NVML call (with
// the field id and the oldest driver that defines it), or how gpuscope
// derives it.
std::string SourceText(const MetricDef& def);

// Converts a stored value for output.
double Convert(double stored, Scale scale);

// Clock event (throttle) reasons in bit order, with the label and nvidia-smi
// names used for each.
struct ClockReasonDef {
  uint64_t bit;
  Metric seconds_metric;        // gpuscope_clock_throttle_seconds_total{reason}
  std::string_view label;       // reason="sw_power_cap"
  std::string_view smi_suffix;  // clocks_event_reasons.<suffix>
};
extern const std::array<ClockReasonDef, 9> kClockReasonTable;

}  // namespace gpuscope
