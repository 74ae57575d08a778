// Proves the ABI declared in abi.h against shared/reference/nvml-abi.md: every
// size and offset the fact sheet lists. A wrong struct fails the build, not a
// customer's GPU.
#include <cstddef>

#include "nvml/abi.h"

namespace gpuscope::nvml {
namespace {

static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlDevice_t) == 8 && sizeof(nvmlEventSet_t) == 8 &&
              sizeof(nvmlGpmSample_t) == 8);

static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlBAR1Memory_t) == 24 && offsetof(nvmlBAR1Memory_t, bar1Used) == 16);
static_assert(offsetof(nvmlPciInfo_t, busIdLegacy) == 0);
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28 && offsetof(nvmlGpuFabricInfo_t, status) == 16);
static_assert(offsetof(nvmlGpuFabricInfo_t, cliqueId) == 20);
static_assert(offsetof(nvmlGpuFabricInfo_t, state) == 24);
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, clusterUuid) == 4);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, status) == 20);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, cliqueId) == 24);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, state) == 28);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, healthMask) == 32);
static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40);
static_assert(offsetof(nvmlGpuFabricInfo_v3_t, healthSummary) == 36);
static_assert(offsetof(nvmlPciInfo_t, domain) == 16);
static_assert(offsetof(nvmlPciInfo_t, bus) == 20);
static_assert(offsetof(nvmlPciInfo_t, device) == 24);
static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);

static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(offsetof(nvmlMemory_t, total) == 0);
static_assert(offsetof(nvmlMemory_t, free) == 8);
static_assert(offsetof(nvmlMemory_t, used) == 16);

static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(offsetof(nvmlMemory_v2_t, version) == 0);
static_assert(offsetof(nvmlMemory_v2_t, total) == 8);
static_assert(offsetof(nvmlMemory_v2_t, reserved) == 16);
static_assert(offsetof(nvmlMemory_v2_t, free) == 24);
static_assert(offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(kMemoryV2Version == 0x02000028);
static_assert(StructVersion(40, 2) == 0x02000028);

static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(offsetof(nvmlEventData_t, device) == 0);
static_assert(offsetof(nvmlEventData_t, eventType) == 8);
static_assert(offsetof(nvmlEventData_t, eventData) == 16);
static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24);
static_assert(offsetof(nvmlEventData_t, computeInstanceId) == 28);

static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(offsetof(nvmlProcessInfo_v2_t, pid) == 0);
static_assert(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16);
static_assert(offsetof(nvmlProcessInfo_v2_t, computeInstanceId) == 20);
static_assert(kProcessInfoStride == 24 && kProcessInfoStrideEarly535 == 32);

static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, pid) == 0);
static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(offsetof(nvmlProcessUtilizationSample_t, memUtil) == 20);
static_assert(offsetof(nvmlProcessUtilizationSample_t, encUtil) == 24);
static_assert(offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28);

static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, fieldId) == 0);
static_assert(offsetof(nvmlFieldValue_t, scopeId) == 4);
static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8);
static_assert(offsetof(nvmlFieldValue_t, latencyUsec) == 16);
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24);
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);

static_assert(sizeof(nvmlDeviceAttributes_t) == 40);
static_assert(offsetof(nvmlDeviceAttributes_t, multiprocessorCount) == 0);
static_assert(offsetof(nvmlDeviceAttributes_t, gpuInstanceSliceCount) == 24);
static_assert(offsetof(nvmlDeviceAttributes_t, computeInstanceSliceCount) == 28);
static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32);

static_assert(sizeof(nvmlGpmSupport_t) == 8);
static_assert(sizeof(nvmlGpmMetric_t) == 40);
static_assert(offsetof(nvmlGpmMetric_t, metricId) == 0);
static_assert(offsetof(nvmlGpmMetric_t, nvmlReturn) == 4);
static_assert(offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo) == 16);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo.shortName) == 16);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo.longName) == 24);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo.unit) == 32);

static_assert(offsetof(nvmlGpmMetricsGet_t, version) == 0);
static_assert(offsetof(nvmlGpmMetricsGet_t, numMetrics) == 4);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample2) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(kNvmlGpmMetricsMax == 333);
static_assert(sizeof(nvmlGpmMetricsGet_t) == 24 + 333 * 40);

// vGPU: nvml.h's layouts (the fact sheet has none).
static_assert(sizeof(nvmlVgpuInstance_t) == 4 && sizeof(nvmlVgpuTypeId_t) == 4);
static_assert(sizeof(nvmlVgpuInstanceUtilizationSample_t) == 48);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, vgpuInstance) == 0);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, timeStamp) == 8);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, smUtil) == 16);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, memUtil) == 24);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, encUtil) == 32);
static_assert(offsetof(nvmlVgpuInstanceUtilizationSample_t, decUtil) == 40);

static_assert(sizeof(nvmlVgpuProcessUtilizationSample_t) == 96);
static_assert(offsetof(nvmlVgpuProcessUtilizationSample_t, pid) == 4);
static_assert(offsetof(nvmlVgpuProcessUtilizationSample_t, processName) == 8);
static_assert(offsetof(nvmlVgpuProcessUtilizationSample_t, timeStamp) == 72);
static_assert(offsetof(nvmlVgpuProcessUtilizationSample_t, smUtil) == 80);
static_assert(offsetof(nvmlVgpuProcessUtilizationSample_t, decUtil) == 92);

static_assert(sizeof(nvmlGridLicenseExpiry_t) == 16);
static_assert(offsetof(nvmlGridLicenseExpiry_t, month) == 4);
static_assert(offsetof(nvmlGridLicenseExpiry_t, sec) == 12);
static_assert(offsetof(nvmlGridLicenseExpiry_t, status) == 14);
static_assert(sizeof(nvmlVgpuLicenseInfo_t) == 24);
static_assert(offsetof(nvmlVgpuLicenseInfo_t, licenseExpiry) == 4);
static_assert(offsetof(nvmlVgpuLicenseInfo_t, currentState) == 20);

static_assert(sizeof(nvmlGridLicensableFeature_t) == 284);
static_assert(offsetof(nvmlGridLicensableFeature_t, featureState) == 4);
static_assert(offsetof(nvmlGridLicensableFeature_t, licenseInfo) == 8);
static_assert(offsetof(nvmlGridLicensableFeature_t, productName) == 136);
static_assert(offsetof(nvmlGridLicensableFeature_t, featureEnabled) == 264);
static_assert(offsetof(nvmlGridLicensableFeature_t, licenseExpiry) == 268);
static_assert(sizeof(nvmlGridLicensableFeatures_t) == 860);
static_assert(offsetof(nvmlGridLicensableFeatures_t, gridLicensableFeatures) == 8);

static_assert(sizeof(nvmlVgpuSchedulerGetState_t) == 16);
static_assert(offsetof(nvmlVgpuSchedulerGetState_t, arrMode) == 4);
static_assert(offsetof(nvmlVgpuSchedulerGetState_t, schedulerParams) == 8);
static_assert(sizeof(nvmlVgpuSchedulerLogEntry_t) == 48);
static_assert(offsetof(nvmlVgpuSchedulerLogEntry_t, swRunlistId) == 24);
static_assert(offsetof(nvmlVgpuSchedulerLogEntry_t, targetTimeSlice) == 32);
static_assert(offsetof(nvmlVgpuSchedulerLogEntry_t, cumulativePreemptionTime) == 40);
static_assert(offsetof(nvmlVgpuSchedulerLog_t, schedulerParams) == 12);
static_assert(offsetof(nvmlVgpuSchedulerLog_t, entriesCount) == 20);
static_assert(offsetof(nvmlVgpuSchedulerLog_t, logEntries) == 24);
static_assert(sizeof(nvmlVgpuSchedulerLog_t) == 9624);
static_assert(sizeof(nvmlVgpuSchedulerCapabilities_t) == 40);
static_assert(offsetof(nvmlVgpuSchedulerCapabilities_t, maxTimeslice) == 12);

}  // namespace
}  // namespace gpuscope::nvml
