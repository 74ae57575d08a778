// The registry of every exported family that is not a catalog row: the
// renderer's own per-GPU families, the agent's self-metrics, the health
// families, the diagnosis families and the OTLP receiver's. Each family is one
// X() entry of GPUSCOPE_BUILTIN_FAMILIES, which both declares it (a constexpr
// BuiltinFamily named by its id) and registers it (kBuiltinFamilies), so
// nothing is listed twice and no count is typed by hand. The code that fills a
// family takes name, type and help from its entry (MakeFamily); docs/metrics.md
// lists every entry through export/family_registry.h (the catalog rows and
// these); a static_assert below lints every name with the catalog's rules
// (gpuscope/metric_names.h). A family not registered anywhere is caught by
// export_doc_test, which checks every family of the golden scrapes.
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

// The labels of the per-process families.
inline constexpr std::string_view kProcessLabels =
    "namespace, pod, container, hpc_job, workload (the process's own), pid (or \"other\"), type "
    "(compute, graphics, compute+graphics, mps), process_name (with --process-names)";

// The labels of the per-vGPU-instance families (on a vGPU host board).
inline constexpr std::string_view kVgpuLabels =
    "vgpu (NVML's instance id), vgpu_uuid, vgpu_type, vm_id, vm_name (where gpuscope can tell), "
    "workload (the VM, with --attribution-labels series)";
inline constexpr std::string_view kVgpuDcgmLabels =
    "vgpu_id, vgpu_uuid, vgpu_type, vm_id, vm_name (where gpuscope can tell)";

// Every family beyond the catalog, once, in documentation order:
// X(id, name, FamilyType, FamilyGroup, LabelBase, labels, help).
#define GPUSCOPE_BUILTIN_FAMILIES(X)                                                               \
  /* The renderer's own families (render.cc; kLeadingBuiltins and kTrailingBuiltins below say      \
     where each is written). */                                                                    \
  X(kGpuInfo, "gpuscope_gpu_info", kInfo, kGpu, kNative,                                           \
    "name, pci_bus_id, minor_number, brand, serial, vbios_version, architecture, "                 \
    "compute_capability, driver_version, cuda_version, hostname",                                  \
    "GPU identity; the value is always 1.")                                                        \
  X(kGpuLost, "gpuscope_gpu_lost", kGauge, kGpu, kNative, "",                                      \
    "1 when the GPU fell off the bus or stopped answering (GPU_IS_LOST).")                         \
  X(kLastSample, "gpuscope_gpu_last_sample_timestamp_seconds", kGauge, kGpu, kNative, "",          \
    "Unix time of the last successful read of the GPU.")                                           \
  X(kLinkActive, "gpuscope_nvlink_link_active", kGauge, kGpu, kNative, "link",                     \
    "1 when the NVLink link is up.")                                                               \
  X(kLinkErrors, "gpuscope_nvlink_link_errors_total", kCounter, kGpu, kNative,                     \
    "link, type (crc_data, crc_flit, recovery, replay)", "NVLink errors per link, by type.")       \
  X(kXidErrors, "gpuscope_xid_errors_total", kCounter, kGpu, kNative, "xid",                       \
    "XID errors reported by the driver since gpuscope started, by code.")                          \
  X(kFabricInfo, "gpuscope_fabric_info", kInfo, kGpu, kNative, "cluster_uuid, clique_id",          \
    "The NVLink fabric (an NVL72 domain) the GPU registered with, from "                           \
    "nvmlDeviceGetGpuFabricInfoV; absent off a fabric. The value is always 1.")                    \
  /* Per-process families (render_processes.cc), with --process-series N: the N processes of a     \
     device using the most memory, the rest summed as pid="other". Their attribution labels are    \
     the process's own (its container's pod, its cgroup's Slurm job), not the device's holders. */ \
  X(kProcessMemory, "gpuscope_process_memory_used_bytes", kGauge, kGpu, kNative, kProcessLabels,   \
    "GPU memory used by the process (NVML's running-process lists).")                              \
  X(kProcessSm, "gpuscope_process_sm_utilization_ratio", kGauge, kGpu, kNative, kProcessLabels,    \
    "Fraction of time the process had a kernel on the SMs, averaged over the last slow "           \
    "interval (nvmlDeviceGetProcessUtilization; absent on MIG and without samples).")              \
  X(kProcessMemoryUtil, "gpuscope_process_memory_utilization_ratio", kGauge, kGpu, kNative,        \
    kProcessLabels,                                                                                \
    "Fraction of time the memory controller served the process, averaged over the last slow "      \
    "interval (nvmlDeviceGetProcessUtilization).")                                                 \
  /* vGPU host boards (render_vgpu.cc): one series per virtual GPU of a VM, bounded by the         \
     board's instances. */                                                                         \
  X(kVgpuSm, "gpuscope_vgpu_sm_utilization_ratio", kGauge, kGpu, kNative, kVgpuLabels,             \
    "Share of the board's time the vGPU scheduler ran this virtual GPU's work on the SMs over "    \
    "the last slow interval (nvmlDeviceGetVgpuUtilization).")                                      \
  X(kVgpuMemoryUtil, "gpuscope_vgpu_memory_utilization_ratio", kGauge, kGpu, kNative, kVgpuLabels, \
    "Share of the board's time the memory controller served this virtual GPU.")                    \
  X(kVgpuEncoder, "gpuscope_vgpu_encoder_utilization_ratio", kGauge, kGpu, kNative, kVgpuLabels,   \
    "Share of the board's time the video encoder served this virtual GPU.")                        \
  X(kVgpuDecoder, "gpuscope_vgpu_decoder_utilization_ratio", kGauge, kGpu, kNative, kVgpuLabels,   \
    "Share of the board's time the video decoder served this virtual GPU.")                        \
  X(kVgpuFbUsed, "gpuscope_vgpu_framebuffer_used_bytes", kGauge, kGpu, kNative, kVgpuLabels,       \
    "Framebuffer the virtual GPU's VM uses (nvmlVgpuInstanceGetFbUsage).")                         \
  X(kVgpuFbTotal, "gpuscope_vgpu_framebuffer_total_bytes", kGauge, kGpu, kNative, kVgpuLabels,     \
    "Framebuffer of the virtual GPU's type (nvmlVgpuTypeGetFramebufferSize).")                     \
  X(kVgpuLicenseState, "gpuscope_vgpu_instance_license_state", kGauge, kGpu, kNative, kVgpuLabels, \
    "The guest's licence as the host sees it (nvmlVgpuInstanceGetLicenseInfo_v2): "                \
    "NVML_GRID_LICENSE_STATE_*, 5 licensed, 2 unlicensed in the grace period, 3 unlicensed and "   \
    "restricted, 4 unlicensed, 0/1 unknown or not yet initialized.")                               \
  X(kVgpuMemoryUsage, "DCGM_FI_DEV_VGPU_MEMORY_USAGE", kGauge, kGpu, kDcgm, kVgpuDcgmLabels,       \
    "vGPU memory usage in MiB (DCGM's field of a vGPU instance).")                                 \
  /* The agent about itself (serve/exporter.cc). */                                                \
  X(kBuildInfo, "gpuscope_build_info", kGauge, kSelf, kNone, "version, commit",                    \
    "gpuscope's version and the git commit it was built from; the value is always 1.")             \
  X(kNvmlUp, "gpuscope_nvml_up", kGauge, kSelf, kNone, "",                                         \
    "1 while NVML answers, 0 while it is down.")                                                   \
  X(kCollectorUp, "gpuscope_collector_up", kGauge, kSelf, kNone,                                   \
    "gpu; on MIG instances gpu_instance, compute_instance (no attribution labels: one series "     \
    "per device whoever holds it)",                                                                \
    "1 when the last cycle read the device (GPU or MIG instance), 0 when it is lost, stale or "    \
    "failing.")                                                                                    \
  X(kCollectDuration, "gpuscope_collect_duration_seconds", kGauge, kSelf, kNone, "",               \
    "How long the last sampling cycle took.")                                                      \
  X(kLastCollect, "gpuscope_last_collect_timestamp_seconds", kGauge, kSelf, kNone, "",             \
    "Unix time the last sampling cycle finished.")                                                 \
  X(kCollectOverruns, "gpuscope_collect_overruns_total", kCounter, kSelf, kNone, "",               \
    "Sampling cycles that ran past the next tick (NVML reads plus the publish: health, "           \
    "diagnosis, rendering), so the next cycle started late; with a frozen clock it reads 0.")      \
  X(kScrapes, "gpuscope_scrapes_total", kCounter, kSelf, kNone, "",                                \
    "/metrics requests served; published with the next sampling cycle.")                           \
  X(kScrapesGzip, "gpuscope_scrapes_gzip_total", kCounter, kSelf, kNone, "",                       \
    "/metrics requests answered with a gzip body (the client sent Accept-Encoding: gzip); "        \
    "published with the next sampling cycle.")                                                     \
  X(kNvmlCallErrors, "gpuscope_nvml_call_errors_total", kCounter, kSelf, kNone,                    \
    "gpu, call (e.g. nvmlDeviceGetPowerUsage, nvmlDeviceGetFieldValues/83), code (the "            \
    "nvmlReturn_t name, e.g. NVML_ERROR_UNKNOWN)",                                                 \
    "NVML calls that failed, by call and NVML return code (NOT_SUPPORTED is absence, not an "      \
    "error; GPU_IS_LOST shows as gpuscope_gpu_lost). A rising rate with one call means that "      \
    "call's series are missing.")                                                                  \
  X(kEventsUp, "gpuscope_events_up", kGauge, kSelf, kNone, "",                                     \
    "1 while the XID/event thread runs and its last wait succeeded; absent when no GPU "           \
    "supports events.")                                                                            \
  X(kEventErrors, "gpuscope_event_wait_errors_total", kCounter, kSelf, kNone, "",                  \
    "Event waits (nvmlEventSetWait_v2) that failed; the thread pauses and retries.")               \
  X(kAttributionUp, "gpuscope_attribution_up", kGauge, kSelf, kNone, "source",                     \
    "1 when the attribution source (kubelet, hpc) answered at its last refresh; 0 while it is "    \
    "down (its labels are missing meanwhile).")                                                    \
  X(kAttributionConflicts, "gpuscope_attribution_conflicts_total", kCounter, kSelf, kNone,         \
    "source",                                                                                      \
    "Slurm jobs whose GPUs the source (hpc: the job-mapping directory) named otherwise than the "  \
    "cgroups of the jobs' own GPU processes, which won; each job counted once, and logged.")       \
  X(kAttributionFailures, "gpuscope_attribution_failures_total", kCounter, kSelf, kNone, "source", \
    "Failed attempts of an attribution source that counts them (resourceslices: lists of the "     \
    "node's DRA ResourceSlices); absent for the others.")                                          \
  /* The health module (health/families.cc). */                                                    \
  X(kGpuHealth, "gpuscope_gpu_health", kGauge, kHealth, kNative, "check",                          \
    "Health verdict per GPU and check: 0 ok, 1 warn, 2 fail (gpuscope health shows the "           \
    "evidence).")                                                                                  \
  X(kCollectorStale, "gpuscope_collector_stale", kGauge, kHealth, kNative, "",                     \
    "1 when the GPU's values are stale: a hung NVML call, or no good read within the "             \
    "staleness limit.")                                                                            \
  /* Planned reboots and link training (health/checks_hw.cc, issue 42). */                         \
  X(kGpuUpSince, "gpuscope_gpu_up_since_seconds", kGauge, kHealth, kNative, "",                    \
    "Unix time the GPU came up as gpuscope saw it: its first read, or its first after it was "     \
    "lost (a driver load or GPU reset). NVLink links train from then on.")                         \
  X(kLinkFailure, "gpuscope_nvlink_link_failure", kGauge, kHealth, kNative, "link",                \
    "Per NVLink link that is not up: 1 when it is down (it was up since the GPU came up, or it "   \
    "is still not up past the training time), 0 while it trains after the GPU came up.")           \
  /* dcgm-exporter's name; the counters file may override type and help. */                        \
  X(kXidWindow, "DCGM_EXP_XID_ERRORS_COUNT", kCounter, kHealth, kDcgm, "xid, window_size_in_ms",   \
    "XID errors seen within the sliding window (window_size_in_ms), by code.")                     \
  /* The diagnosis monitor (analysis/monitor.cc). */                                               \
  X(kBottleneck, "gpuscope_bottleneck", kGauge, kDiagnosis, kNative, "kind",                       \
    "1 when the diagnosis over the trailing window finds this kind of bottleneck or state on "     \
    "the GPU (see gpuscope diagnose).")                                                            \
  X(kBottleneckConfidence, "gpuscope_bottleneck_confidence", kGauge, kDiagnosis, kNative, "kind",  \
    "Confidence in [0, 1] of the finding of this kind; 0 when absent.")                            \
  X(kOomEta, "gpuscope_memory_oom_eta_seconds", kGauge, kDiagnosis, kNative, "",                   \
    "Predicted seconds until the framebuffer is full, from the least-squares memory trend; "       \
    "present only while a trend predicts it.")                                                     \
  X(kIdleHeld, "gpuscope_gpu_idle_held_seconds_total", kCounter, kDiagnosis, kNative, "",          \
    "Seconds the GPU was idle while processes held its memory (waste).")                           \
  X(kWastedCost, "gpuscope_wasted_cost_total", kCounter, kDiagnosis, kNative, "",                  \
    "Cost of idle-held time: idle-held hours x the configured GPU-hour price.")                    \
  /* The health module again: dcgm-exporter's name and labels, values as DCGM's health results;    \
     the counters file may override type and help. */                                              \
  X(kGpuHealthStatus, "DCGM_EXP_GPU_HEALTH_STATUS", kGauge, kHealth, kDcgm,                        \
    "health_watch, health_error_code",                                                             \
    "Health per DCGM watch system from gpuscope's checks: 0 pass, 10 warn, 20 fail.")              \
  /* The OTLP receiver's own state (otlp/store.cc; the application series themselves are named by  \
     the KPI conventions of docs/app-kpis.md, not here), the KPI join (serve/kpi_join.cc) and the  \
     KPI regression (otlp/regression.cc). */                                                       \
  X(kOtlpPointsAccepted, "gpuscope_otlp_points_accepted_total", kCounter, kSelf, kNone, "",        \
    "Application data points the OTLP receiver kept.")                                             \
  X(kOtlpPointsRejected, "gpuscope_otlp_points_rejected_total", kCounter, kSelf, kNone, "",        \
    "Application data points the OTLP receiver refused (bad data, unsupported type, series "       \
    "limit, rate limit); the answer's message says why.")                                          \
  X(kOtlpPointsUnattributed, "gpuscope_otlp_points_unattributed_total", kCounter, kSelf, kNone,    \
    "", "Kept application data points whose sender matched no GPU (exported with gpu=\"\").")      \
  X(kOtlpSeries, "gpuscope_otlp_series_active", kGauge, kSelf, kNone, "",                          \
    "Application series the OTLP receiver keeps.")                                                 \
  X(kOtlpRequests, "gpuscope_otlp_requests_total", kCounter, kSelf, kNone, "code",                 \
    "OTLP/HTTP export requests answered, by HTTP status code.")                                    \
  X(kAppSeriesOmitted, "gpuscope_otlp_series_omitted_active", kGauge, kSelf, kNone, "limit",       \
    "Application series left out at the last KPI join because a limit was reached: "               \
    "metrics_bytes (the application share of /metrics, one series per GPU), regression_keys "      \
    "(the KPI, GPU and workload keys kpi_regression follows).")                                    \
  X(kKpiRegression, "gpuscope_kpi_regression_active", kGauge, kDiagnosis, kNative,                 \
    "kpi, workload, cause",                                                                        \
    "1 while an application KPI received over OTLP (docs/app-kpis.md) is worse than its earlier "  \
    "level by 20% or more (kpi_regression); cause: the GPU findings that coincide on this GPU, "   \
    "or none.")                                                                                    \
  X(kKpiChange, "gpuscope_kpi_change_ratio", kGauge, kDiagnosis, kNative, "kpi, workload",         \
    "Relative change of an application KPI's recent mean against its earlier level (0.25: 25% "    \
    "higher).")                                                                                    \
  /* Node remediation (src/remediate; only with --remediate). */                                   \
  X(kRemediationActions, "gpuscope_remediation_actions_total", kCounter, kSelf, kNone,             \
    "action (drain, resume), result",                                                              \
    "Node remediation decisions: drains and resumes carried out (result ok or error), done in "    \
    "dry run, or refused (breaker_open, opted_out, admin_drain, already_drained).")                \
  /* --attribution-labels info: who holds each device, instead of holder labels on every series    \
     (render.h). */                                                                                \
  X(kGpuHolderInfo, "gpuscope_gpu_holder_info", kInfo, kGpu, kNative,                              \
    "namespace, pod, container, hpc_job, workload",                                                \
    "One holder of the GPU (pod, Slurm job, workload) with --attribution-labels info; join on "    \
    "uuid. The value is always 1.")                                                                \
  /* Each holder's measured share of a shared GPU (render_processes.cc), in both                   \
     --attribution-labels modes: one series per holder of a whole GPU. */                          \
  X(kGpuHolderSmShare, "gpuscope_gpu_holder_sm_share_ratio", kGauge, kGpu, kNative,                \
    "namespace, pod, container, hpc_job, workload (the holder's, in both attribution-label "       \
    "modes)",                                                                                      \
    "Share of the GPU's time its SMs ran this holder's processes over the last slow interval "     \
    "(nvmlDeviceGetProcessUtilization joined with each process's pod or job); the holders' "       \
    "shares add up to the GPU's busy share at most; the series without holder labels is the "      \
    "share of processes no holder matches. Absent on MIG and where NVML gives no per-process "     \
    "samples; the reports then split the GPU evenly.")

#define GPUSCOPE_BUILTIN_DECLARE(id, name, type, group, base, labels, help) \
  inline constexpr BuiltinFamily id{                                        \
      name, help, FamilyType::type, labels, FamilyGroup::group, LabelBase::base};
GPUSCOPE_BUILTIN_FAMILIES(GPUSCOPE_BUILTIN_DECLARE)
#undef GPUSCOPE_BUILTIN_DECLARE

// Every registered family, in documentation order.
#define GPUSCOPE_BUILTIN_ADDRESS(id, ...) &id,
inline constexpr auto kBuiltinFamilies =
    std::to_array<const BuiltinFamily*>({GPUSCOPE_BUILTIN_FAMILIES(GPUSCOPE_BUILTIN_ADDRESS)});
#undef GPUSCOPE_BUILTIN_ADDRESS

// In the order the Renderer writes them (the leading ones before the catalog
// rows, the trailing ones after; the process families per process).
inline constexpr auto kLeadingBuiltins =
    std::to_array<const BuiltinFamily*>({&kGpuInfo, &kGpuLost, &kLastSample});
inline constexpr auto kTrailingBuiltins =
    std::to_array<const BuiltinFamily*>({&kLinkActive, &kLinkErrors, &kXidErrors, &kFabricInfo});
inline constexpr auto kProcessBuiltins =
    std::to_array<const BuiltinFamily*>({&kProcessMemory, &kProcessSm, &kProcessMemoryUtil});
inline constexpr auto kVgpuBuiltins =
    std::to_array<const BuiltinFamily*>({&kVgpuSm, &kVgpuMemoryUtil, &kVgpuEncoder, &kVgpuDecoder,
                                         &kVgpuFbUsed, &kVgpuFbTotal, &kVgpuLicenseState});

// The name lint of the catalog, for every registered family: native names
// follow Prometheus conventions, dcgm-exporter names are valid names.
constexpr bool ValidRegistry() {
  for (std::size_t i = 0; i < kBuiltinFamilies.size(); ++i) {
    const BuiltinFamily& f = *kBuiltinFamilies[i];
    if (f.base == LabelBase::kDcgm) {
      if (!metric_names::Valid(f.name)) return false;
    } else if (!metric_names::ValidNative(f.name, f.type == FamilyType::kCounter)) {
      return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (kBuiltinFamilies[j]->name == f.name) return false;
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
