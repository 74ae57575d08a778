// The registry of every exported family that is not a catalog row: the
// renderer's own per-GPU families, the agent's self-metrics, the health
// families and the diagnosis families. One entry gives name, type, help,
// labels and group; the code that fills a family takes name, type and help
// from its entry (MakeFamily), docs/metrics.md lists every entry (gpuscope
// docs metrics), and a static_assert below lints every name with the
// catalog's rules (gpuscope/metric_names.h). A family not registered here is
// caught by export_doc_test, which checks every family of the golden scrapes.
//
// Header-only constexpr data (like family.h), so any area may use it without
// linking gpuscope_export. Thread safety: constexpr data.
#pragma once

#include <array>
#include <string_view>

#include "export/family.h"
#include "gpuscope/metric_names.h"

namespace gpuscope::prom {

// Where a family comes from; docs/metrics.md groups by it.
enum class FamilyGroup : uint8_t {
  kGpu,        // the renderer, from the snapshot (identity, loss, links, XIDs)
  kSelf,       // the agent about itself: NVML, the sampler, scrapes, events
  kHealth,     // the health module
  kDiagnosis,  // the diagnosis monitor
};

struct BuiltinFamily {
  std::string_view name;
  std::string_view help;
  FamilyType type;
  std::string_view labels;  // for the documentation, after the base labels
  FamilyGroup group;
  LabelBase base;  // kNative: gpu, uuid first; kNone: only `labels`; kDcgm: dcgm's
};

// The renderer's own families (in render.cc's order: the first three before
// the catalog rows, the rest after).
inline constexpr BuiltinFamily kGpuInfo{
    "gpuscope_gpu_info",
    "GPU identity; the value is always 1.",
    FamilyType::kInfo,
    "name, pci_bus_id, minor_number, brand, serial, vbios_version, architecture, "
    "compute_capability, driver_version, cuda_version, hostname",
    FamilyGroup::kGpu,
    LabelBase::kNative};
inline constexpr BuiltinFamily kGpuLost{
    "gpuscope_gpu_lost", "1 when the GPU fell off the bus or stopped answering (GPU_IS_LOST).",
    FamilyType::kGauge,  "",
    FamilyGroup::kGpu,   LabelBase::kNative};
inline constexpr BuiltinFamily kLastSample{"gpuscope_gpu_last_sample_timestamp_seconds",
                                           "Unix time of the last successful read of the GPU.",
                                           FamilyType::kGauge,
                                           "",
                                           FamilyGroup::kGpu,
                                           LabelBase::kNative};
inline constexpr BuiltinFamily kLinkActive{"gpuscope_nvlink_link_active",
                                           "1 when the NVLink link is up.",
                                           FamilyType::kGauge,
                                           "link",
                                           FamilyGroup::kGpu,
                                           LabelBase::kNative};
inline constexpr BuiltinFamily kLinkErrors{"gpuscope_nvlink_link_errors_total",
                                           "NVLink errors per link, by type.",
                                           FamilyType::kCounter,
                                           "link, type (crc_data, crc_flit, recovery, replay)",
                                           FamilyGroup::kGpu,
                                           LabelBase::kNative};
inline constexpr BuiltinFamily kXidErrors{
    "gpuscope_xid_errors_total",
    "XID errors reported by the driver since gpuscope started, by code.",
    FamilyType::kCounter,
    "xid",
    FamilyGroup::kGpu,
    LabelBase::kNative};

// Per-process families (render_processes.cc), with --process-series N: the N
// processes of a device using the most memory, the rest summed as pid="other".
// Their attribution labels are the process's own (its container's pod, its
// cgroup's Slurm job), not the device's holders.
inline constexpr std::string_view kProcessLabels =
    "namespace, pod, container, hpc_job, workload (the process's own), pid (or \"other\"), type "
    "(compute, graphics, compute+graphics, mps), process_name (with --process-names)";
inline constexpr BuiltinFamily kProcessMemory{
    "gpuscope_process_memory_used_bytes",
    "GPU memory used by the process (NVML's running-process lists).",
    FamilyType::kGauge,
    kProcessLabels,
    FamilyGroup::kGpu,
    LabelBase::kNative};
inline constexpr BuiltinFamily kProcessSm{
    "gpuscope_process_sm_utilization_ratio",
    "Fraction of time the process had a kernel on the SMs, averaged over the last slow "
    "interval (nvmlDeviceGetProcessUtilization; absent on MIG and without samples).",
    FamilyType::kGauge,
    kProcessLabels,
    FamilyGroup::kGpu,
    LabelBase::kNative};
inline constexpr BuiltinFamily kProcessMemoryUtil{
    "gpuscope_process_memory_utilization_ratio",
    "Fraction of time the memory controller served the process, averaged over the last slow "
    "interval (nvmlDeviceGetProcessUtilization).",
    FamilyType::kGauge,
    kProcessLabels,
    FamilyGroup::kGpu,
    LabelBase::kNative};
inline constexpr std::array<const BuiltinFamily*, 3> kProcessBuiltins = {
    &kProcessMemory, &kProcessSm, &kProcessMemoryUtil};

// The agent about itself (serve/exporter.cc).
inline constexpr BuiltinFamily kBuildInfo{
    "gpuscope_build_info",
    "gpuscope's version and the git commit it was built from; the value is always 1.",
    FamilyType::kGauge,
    "version, commit",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kNvmlUp{
    "gpuscope_nvml_up", "1 while NVML answers, 0 while it is down.",
    FamilyType::kGauge, "",
    FamilyGroup::kSelf, LabelBase::kNone};
inline constexpr BuiltinFamily kCollectorUp{
    "gpuscope_collector_up",
    "1 when the last cycle read the device (GPU or MIG instance), 0 when it is lost, stale or "
    "failing.",
    FamilyType::kGauge,
    "gpu; on MIG instances gpu_instance, compute_instance (no attribution labels: one series "
    "per device whoever holds it)",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kCollectDuration{"gpuscope_collect_duration_seconds",
                                                "How long the last sampling cycle took.",
                                                FamilyType::kGauge,
                                                "",
                                                FamilyGroup::kSelf,
                                                LabelBase::kNone};
inline constexpr BuiltinFamily kLastCollect{"gpuscope_last_collect_timestamp_seconds",
                                            "Unix time the last sampling cycle finished.",
                                            FamilyType::kGauge,
                                            "",
                                            FamilyGroup::kSelf,
                                            LabelBase::kNone};
inline constexpr BuiltinFamily kCollectOverruns{
    "gpuscope_collect_overruns_total",
    "Sampling cycles that ran past the next tick (NVML reads plus the publish: health, "
    "diagnosis, rendering), so the next cycle started late; with a frozen clock it reads 0.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kScrapes{
    "gpuscope_scrapes_total", "/metrics requests served; published with the next sampling cycle.",
    FamilyType::kCounter,     "",
    FamilyGroup::kSelf,       LabelBase::kNone};
inline constexpr BuiltinFamily kScrapesGzip{
    "gpuscope_scrapes_gzip_total",
    "/metrics requests answered with a gzip body (the client sent Accept-Encoding: gzip); "
    "published with the next sampling cycle.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kNvmlCallErrors{
    "gpuscope_nvml_call_errors_total",
    "NVML calls that failed, by call and NVML return code (NOT_SUPPORTED is absence, not an "
    "error; GPU_IS_LOST shows as gpuscope_gpu_lost). A rising rate with one call means that "
    "call's series are missing.",
    FamilyType::kCounter,
    "gpu, call (e.g. nvmlDeviceGetPowerUsage, nvmlDeviceGetFieldValues/83), code (the "
    "nvmlReturn_t name, e.g. NVML_ERROR_UNKNOWN)",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kEventsUp{
    "gpuscope_events_up",
    "1 while the XID/event thread runs and its last wait succeeded; absent when no GPU "
    "supports events.",
    FamilyType::kGauge,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kEventErrors{
    "gpuscope_event_wait_errors_total",
    "Event waits (nvmlEventSetWait_v2) that failed; the thread pauses and retries.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};

inline constexpr BuiltinFamily kAttributionUp{
    "gpuscope_attribution_up",
    "1 when the attribution source (kubelet, hpc) answered at its last refresh; 0 while it is "
    "down (its labels are missing meanwhile).",
    FamilyType::kGauge,
    "source",
    FamilyGroup::kSelf,
    LabelBase::kNone};

// The health module (health/families.cc).
inline constexpr BuiltinFamily kGpuHealth{
    "gpuscope_gpu_health",
    "Health verdict per GPU and check: 0 ok, 1 warn, 2 fail (gpuscope health shows the "
    "evidence).",
    FamilyType::kGauge,
    "check",
    FamilyGroup::kHealth,
    LabelBase::kNative};
inline constexpr BuiltinFamily kCollectorStale{
    "gpuscope_collector_stale",
    "1 when the GPU's values are stale: a hung NVML call, or no good read within the "
    "staleness limit.",
    FamilyType::kGauge,
    "",
    FamilyGroup::kHealth,
    LabelBase::kNative};
// dcgm-exporter's name; the counters file may override type and help.
inline constexpr BuiltinFamily kXidWindow{
    "DCGM_EXP_XID_ERRORS_COUNT",
    "XID errors seen within the sliding window (window_size_in_ms), by code.",
    FamilyType::kCounter,
    "xid, window_size_in_ms",
    FamilyGroup::kHealth,
    LabelBase::kDcgm};
// dcgm-exporter's name and labels; values as DCGM's health results.
inline constexpr BuiltinFamily kGpuHealthStatus{
    "DCGM_EXP_GPU_HEALTH_STATUS",
    "Health per DCGM watch system from gpuscope's checks: 0 pass, 10 warn, 20 fail.",
    FamilyType::kGauge,
    "health_watch, health_error_code",
    FamilyGroup::kHealth,
    LabelBase::kDcgm};

// The diagnosis monitor (analysis/monitor.cc).
inline constexpr BuiltinFamily kBottleneck{
    "gpuscope_bottleneck",
    "1 when the diagnosis over the trailing window finds this kind of bottleneck or state on "
    "the GPU (see gpuscope diagnose).",
    FamilyType::kGauge,
    "kind",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};
inline constexpr BuiltinFamily kBottleneckConfidence{
    "gpuscope_bottleneck_confidence",
    "Confidence in [0, 1] of the finding of this kind; 0 when absent.",
    FamilyType::kGauge,
    "kind",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};
inline constexpr BuiltinFamily kOomEta{
    "gpuscope_memory_oom_eta_seconds",
    "Predicted seconds until the framebuffer is full, from the least-squares memory trend; "
    "present only while a trend predicts it.",
    FamilyType::kGauge,
    "",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};
inline constexpr BuiltinFamily kIdleHeld{
    "gpuscope_gpu_idle_held_seconds_total",
    "Seconds the GPU was idle while processes held its memory (waste).",
    FamilyType::kCounter,
    "",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};
inline constexpr BuiltinFamily kWastedCost{
    "gpuscope_wasted_cost_total",
    "Cost of idle-held time: idle-held hours x the configured GPU-hour price.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};

// The OTLP receiver's own state (the application series themselves are named
// by the KPI conventions of docs/app-kpis.md, not here).
inline constexpr BuiltinFamily kOtlpPointsAccepted{
    "gpuscope_otlp_points_accepted_total",
    "Application data points the OTLP receiver kept.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kOtlpPointsRejected{
    "gpuscope_otlp_points_rejected_total",
    "Application data points the OTLP receiver refused (bad data, unsupported type, series "
    "limit, rate limit); the answer's message says why.",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kOtlpPointsUnattributed{
    "gpuscope_otlp_points_unattributed_total",
    "Kept application data points whose sender matched no GPU (exported with gpu=\"\").",
    FamilyType::kCounter,
    "",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kOtlpSeries{"gpuscope_otlp_series_active",
                                           "Application series the OTLP receiver keeps.",
                                           FamilyType::kGauge,
                                           "",
                                           FamilyGroup::kSelf,
                                           LabelBase::kNone};
inline constexpr BuiltinFamily kOtlpRequests{
    "gpuscope_otlp_requests_total",
    "OTLP/HTTP export requests answered, by HTTP status code.",
    FamilyType::kCounter,
    "code",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kAppSeriesOmitted{
    "gpuscope_otlp_series_omitted_active",
    "Application series left out at the last KPI join because a limit was reached: "
    "metrics_bytes (the application share of /metrics, one series per GPU), regression_keys "
    "(the KPI, GPU and workload keys kpi_regression follows).",
    FamilyType::kGauge,
    "limit",
    FamilyGroup::kSelf,
    LabelBase::kNone};
inline constexpr BuiltinFamily kKpiRegression{
    "gpuscope_kpi_regression_active",
    "1 while an application KPI received over OTLP (docs/app-kpis.md) is worse than its earlier "
    "level by 20% or more (kpi_regression); cause: the GPU findings that coincide on this GPU, "
    "or none.",
    FamilyType::kGauge,
    "kpi, workload, cause",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};
inline constexpr BuiltinFamily kKpiChange{
    "gpuscope_kpi_change_ratio",
    "Relative change of an application KPI's recent mean against its earlier level (0.25: 25% "
    "higher).",
    FamilyType::kGauge,
    "kpi, workload",
    FamilyGroup::kDiagnosis,
    LabelBase::kNative};

// --attribution-labels info: who holds each device, instead of holder labels
// on every series (render.h).
inline constexpr BuiltinFamily kGpuHolderInfo{
    "gpuscope_gpu_holder_info",
    "One holder of the GPU (pod, Slurm job, workload) with --attribution-labels info; join on "
    "uuid. The value is always 1.",
    FamilyType::kInfo,
    "namespace, pod, container, hpc_job, workload",
    FamilyGroup::kGpu,
    LabelBase::kNative};

// In the order the Renderer writes them (first three before the catalog rows).
inline constexpr std::array<const BuiltinFamily*, 3> kLeadingBuiltins = {&kGpuInfo, &kGpuLost,
                                                                         &kLastSample};
inline constexpr std::array<const BuiltinFamily*, 3> kTrailingBuiltins = {
    &kLinkActive, &kLinkErrors, &kXidErrors};

// Every registered family, in documentation order.
inline constexpr std::array<const BuiltinFamily*, 39> kRegistry = {&kGpuInfo,
                                                                   &kGpuLost,
                                                                   &kLastSample,
                                                                   &kLinkActive,
                                                                   &kLinkErrors,
                                                                   &kXidErrors,
                                                                   &kProcessMemory,
                                                                   &kProcessSm,
                                                                   &kProcessMemoryUtil,
                                                                   &kBuildInfo,
                                                                   &kNvmlUp,
                                                                   &kCollectorUp,
                                                                   &kCollectDuration,
                                                                   &kLastCollect,
                                                                   &kCollectOverruns,
                                                                   &kScrapes,
                                                                   &kScrapesGzip,
                                                                   &kNvmlCallErrors,
                                                                   &kEventsUp,
                                                                   &kEventErrors,
                                                                   &kAttributionUp,
                                                                   &kGpuHealth,
                                                                   &kCollectorStale,
                                                                   &kXidWindow,
                                                                   &kBottleneck,
                                                                   &kBottleneckConfidence,
                                                                   &kOomEta,
                                                                   &kIdleHeld,
                                                                   &kWastedCost,
                                                                   &kGpuHealthStatus,
                                                                   &kOtlpPointsAccepted,
                                                                   &kOtlpPointsRejected,
                                                                   &kOtlpPointsUnattributed,
                                                                   &kOtlpSeries,
                                                                   &kOtlpRequests,
                                                                   &kAppSeriesOmitted,
                                                                   &kKpiRegression,
                                                                   &kKpiChange,
                                                                   &kGpuHolderInfo};

// The name lint of the catalog, for every registered family: native names
// follow Prometheus conventions, dcgm-exporter names are valid names.
constexpr bool ValidRegistry() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i) {
    const BuiltinFamily& f = *kRegistry[i];
    if (f.base == LabelBase::kDcgm) {
      if (!metric_names::Valid(f.name)) return false;
    } else if (!metric_names::ValidNative(f.name, f.type == FamilyType::kCounter)) {
      return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (kRegistry[j]->name == f.name) return false;
    }
  }
  return true;
}
static_assert(ValidRegistry(), "family registry: bad name, wrong suffix or duplicate");

// An empty family with the entry's name, type, help and label base.
inline Family MakeFamily(const BuiltinFamily& def) {
  Family family;
  family.name = std::string(def.name);
  family.help = std::string(def.help);
  family.type = def.type;
  family.base = def.base;
  return family;
}

}  // namespace gpuscope::prom
