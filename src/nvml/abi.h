// The NVML C ABI, declared by the project from shared/reference/nvml-abi.md.
//
// Contract: this header is the only place that spells NVML's C types. Both the
// loader (src/nvml) and the simulator (sim/) include it; nothing else may.
// Every size and offset the fact sheet lists is proven by static_assert in
// abi_asserts.cc. Names follow NVIDIA's so that the two can be compared by eye.
#pragma once

#include <cstddef>

#include "nvml/field_ids.h"

extern "C" {

typedef int nvmlReturn_t;  // A C enum: 4-byte int.

// Opaque handles passed by value.
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id (0x10DE)
  unsigned int pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
} nvmlPciInfo_t;

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;  // includes reserved
} nvmlMemory_t;

typedef struct {
  unsigned int version;  // must be kNvmlMemoryV2Version exactly
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for XidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

// The _v2/_v3 running-process entry.
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; ~0ULL = not available
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;  // microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;  // NVLink id; UINT_MAX = all links
  long long timestamp;   // microseconds
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;  // per entry
  nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
  unsigned int version;  // 1, plain
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // owned by NVML
} nvmlGpmMetric_t;

typedef struct {  // nvmlBAR1Memory_t, sizeof 24
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

// Sized for the largest known metric table (R595+); a caller sets numMetrics
// to what it asks, a driver may assume the whole array is writable.
enum { kNvmlGpmMetricsMax = 333 };
typedef struct {
  unsigned int version;  // 1, plain
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kNvmlGpmMetricsMax];
} nvmlGpmMetricsGet_t;

// GPU fabric (NVLink domain) registration, R550+ on NVSwitch and NVL72 systems.
// nvmlDeviceGetGpuFabricInfo takes the plain v1 (no version); the versioned
// call takes v2 (R550, adds healthMask) or v3 (R575, adds healthSummary).
typedef unsigned char nvmlGpuFabricState_t;
typedef struct {  // nvmlGpuFabricInfo_t, sizeof 28
  unsigned char clusterUuid[16];
  nvmlReturn_t status;  // meaningful only once state is COMPLETED
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;
typedef struct {  // sizeof 36, version 0x02000024
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
typedef struct {  // sizeof 40, version 0x03000028
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;

// vGPU (host side: one board carved into virtual GPUs for VMs; guest side: a
// virtual GPU's licence). Not in the fact sheet: laid out as NVIDIA's nvml.h
// (R470 to R580) declares them; abi_asserts.cc pins every size and offset.
typedef unsigned int nvmlVgpuInstance_t;  // an id, not a pointer
typedef unsigned int nvmlVgpuTypeId_t;

typedef struct {  // nvmlVgpuInstanceUtilizationSample_t, sizeof 48
  nvmlVgpuInstance_t vgpuInstance;
  unsigned long long timeStamp;  // microseconds
  nvmlValue_t smUtil;            // percent, of the type sampleValType says
  nvmlValue_t memUtil;
  nvmlValue_t encUtil;
  nvmlValue_t decUtil;
} nvmlVgpuInstanceUtilizationSample_t;

enum { kNvmlVgpuNameBufferSize = 64 };
typedef struct {  // nvmlVgpuProcessUtilizationSample_t, sizeof 96
  nvmlVgpuInstance_t vgpuInstance;
  unsigned int pid;  // in the guest
  char processName[kNvmlVgpuNameBufferSize];
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlVgpuProcessUtilizationSample_t;

typedef struct {  // nvmlGridLicenseExpiry_t, sizeof 16
  unsigned int year;
  unsigned short month;
  unsigned short day;
  unsigned short hour;
  unsigned short min;
  unsigned short sec;
  unsigned char status;  // NVML_GRID_LICENSE_EXPIRY_*
} nvmlGridLicenseExpiry_t;

typedef struct {  // nvmlVgpuLicenseInfo_t (nvmlVgpuInstanceGetLicenseInfo_v2), sizeof 24
  unsigned char isLicensed;
  nvmlGridLicenseExpiry_t licenseExpiry;
  unsigned int currentState;  // NVML_GRID_LICENSE_STATE_*
} nvmlVgpuLicenseInfo_t;

enum { kNvmlGridLicenseBufferSize = 128, kNvmlGridLicenseFeatureMaxCount = 3 };
typedef struct {              // nvmlGridLicensableFeature_t, sizeof 284
  int featureCode;            // nvmlGridLicenseFeatureCode_t
  unsigned int featureState;  // non-zero: licensed
  char licenseInfo[kNvmlGridLicenseBufferSize];
  char productName[kNvmlGridLicenseBufferSize];
  unsigned int featureEnabled;
  nvmlGridLicenseExpiry_t licenseExpiry;
} nvmlGridLicensableFeature_t;

typedef struct {  // nvmlGridLicensableFeatures_t (_v4), sizeof 860
  int isGridLicenseSupported;
  unsigned int licensableFeaturesCount;
  nvmlGridLicensableFeature_t gridLicensableFeatures[kNvmlGridLicenseFeatureMaxCount];
} nvmlGridLicensableFeatures_t;

typedef struct {                 // nvmlVgpuSchedulerGetState_t, sizeof 16
  unsigned int schedulerPolicy;  // NVML_VGPU_SCHEDULER_POLICY_*
  unsigned int arrMode;          // adaptive round-robin: 0 unknown, 1 disable, 2 enable
  union {
    struct {
      unsigned int avgFactor;
      unsigned int timeslice;  // microseconds
    } vgpuSchedDataWithARR;
    struct {
      unsigned int timeslice;
    } vgpuSchedData;
  } schedulerParams;
} nvmlVgpuSchedulerGetState_t;

// The vGPU scheduler's log (NVML_SCHEDULER_SW_MAX_LOG_ENTRIES): one entry per
// time slice a software runlist (a vGPU) ran, times in ns.
enum { kNvmlVgpuSchedulerMaxLogEntries = 200 };
typedef struct {                                // nvmlVgpuSchedulerLogEntry_t, sizeof 48
  unsigned long long timestamp;                 // when this runlist was preempted
  unsigned long long timeRunTotal;              // its run time since it started
  unsigned long long timeRun;                   // its run time in this slice
  unsigned int swRunlistId;                     // the software runlist
  unsigned long long targetTimeSlice;           // the slice the scheduler aimed at
  unsigned long long cumulativePreemptionTime;  // its time preempted so far
} nvmlVgpuSchedulerLogEntry_t;

typedef struct {  // nvmlVgpuSchedulerLog_t, sizeof 9624
  unsigned int engineId;
  unsigned int schedulerPolicy;
  unsigned int arrMode;
  decltype(nvmlVgpuSchedulerGetState_t::schedulerParams) schedulerParams;
  unsigned int entriesCount;
  nvmlVgpuSchedulerLogEntry_t logEntries[kNvmlVgpuSchedulerMaxLogEntries];
} nvmlVgpuSchedulerLog_t;

typedef struct {                        // nvmlVgpuSchedulerCapabilities_t, sizeof 40
  unsigned int supportedSchedulers[3];  // NVML_SUPPORTED_VGPU_SCHEDULER_POLICY_COUNT
  unsigned int maxTimeslice, minTimeslice;
  unsigned int isArrModeSupported;
  unsigned int maxFrequencyForARR, minFrequencyForARR;
  unsigned int maxAvgFactorForARR, minAvgFactorForARR;
} nvmlVgpuSchedulerCapabilities_t;

}  // extern "C"

// Every NVML function the project uses, once: X(exported name, need, params).
// need is Required (the agent cannot run without it) or Optional (a missing
// symbol means the feature is unsupported). All return nvmlReturn_t, except
// nvmlErrorString which is declared apart.
#define GPUSCOPE_NVML_SYMBOLS(X)                                                                 \
  X(nvmlInit_v2, Required, (void))                                                               \
  X(nvmlInitWithFlags, Optional, (unsigned int flags))                                           \
  X(nvmlShutdown, Required, (void))                                                              \
  X(nvmlSystemGetDriverVersion, Optional, (char* version, unsigned int len))                     \
  X(nvmlSystemGetNVMLVersion, Optional, (char* version, unsigned int len))                       \
  X(nvmlSystemGetCudaDriverVersion_v2, Optional, (int* version))                                 \
  X(nvmlSystemGetProcessName, Optional, (unsigned int pid, char* name, unsigned int len))        \
  X(nvmlDeviceGetCount_v2, Required, (unsigned int* count))                                      \
  X(nvmlDeviceGetHandleByIndex_v2, Required, (unsigned int index, nvmlDevice_t* device))         \
  X(nvmlDeviceGetHandleByUUID, Optional, (const char* uuid, nvmlDevice_t* device))               \
  X(nvmlDeviceGetIndex, Optional, (nvmlDevice_t d, unsigned int* index))                         \
  X(nvmlDeviceGetName, Optional, (nvmlDevice_t d, char* name, unsigned int n))                   \
  X(nvmlDeviceGetUUID, Optional, (nvmlDevice_t d, char* uuid, unsigned int n))                   \
  X(nvmlDeviceGetSerial, Optional, (nvmlDevice_t d, char* s, unsigned int n))                    \
  X(nvmlDeviceGetVbiosVersion, Optional, (nvmlDevice_t d, char* v, unsigned int n))              \
  X(nvmlDeviceGetPciInfo_v3, Optional, (nvmlDevice_t d, nvmlPciInfo_t * pci))                    \
  X(nvmlDeviceGetMinorNumber, Optional, (nvmlDevice_t d, unsigned int* minor))                   \
  X(nvmlDeviceGetArchitecture, Optional, (nvmlDevice_t d, unsigned int* arch))                   \
  X(nvmlDeviceGetBrand, Optional, (nvmlDevice_t d, int* brand))                                  \
  X(nvmlDeviceGetCudaComputeCapability, Optional, (nvmlDevice_t d, int* major, int* minor))      \
  X(nvmlDeviceGetPersistenceMode, Optional, (nvmlDevice_t d, int* mode))                         \
  X(nvmlDeviceGetDisplayMode, Optional, (nvmlDevice_t d, int* mode))                             \
  X(nvmlDeviceGetComputeMode, Optional, (nvmlDevice_t d, int* mode))                             \
  X(nvmlDeviceGetPowerManagementMode, Optional, (nvmlDevice_t d, int* mode))                     \
  X(nvmlDeviceGetUtilizationRates, Optional, (nvmlDevice_t d, nvmlUtilization_t * util))         \
  X(nvmlDeviceGetMemoryInfo, Optional, (nvmlDevice_t d, nvmlMemory_t * mem))                     \
  X(nvmlDeviceGetMemoryInfo_v2, Optional, (nvmlDevice_t d, nvmlMemory_v2_t * mem))               \
  X(nvmlDeviceGetEncoderUtilization, Optional,                                                   \
    (nvmlDevice_t d, unsigned int* util, unsigned int* periodUs))                                \
  X(nvmlDeviceGetDecoderUtilization, Optional,                                                   \
    (nvmlDevice_t d, unsigned int* util, unsigned int* periodUs))                                \
  X(nvmlDeviceGetTemperature, Optional, (nvmlDevice_t d, int sensor, unsigned int* celsius))     \
  X(nvmlDeviceGetTemperatureThreshold, Optional,                                                 \
    (nvmlDevice_t d, int threshold, unsigned int* celsius))                                      \
  X(nvmlDeviceGetPowerUsage, Optional, (nvmlDevice_t d, unsigned int* mw))                       \
  X(nvmlDeviceGetTotalEnergyConsumption, Optional, (nvmlDevice_t d, unsigned long long* mj))     \
  X(nvmlDeviceGetEnforcedPowerLimit, Optional, (nvmlDevice_t d, unsigned int* mw))               \
  X(nvmlDeviceGetPowerManagementLimit, Optional, (nvmlDevice_t d, unsigned int* mw))             \
  X(nvmlDeviceGetPowerManagementDefaultLimit, Optional, (nvmlDevice_t d, unsigned int* mw))      \
  X(nvmlDeviceGetPowerManagementLimitConstraints, Optional,                                      \
    (nvmlDevice_t d, unsigned int* min_mw, unsigned int* max_mw))                                \
  X(nvmlDeviceGetClockInfo, Optional, (nvmlDevice_t d, int type, unsigned int* mhz))             \
  X(nvmlDeviceGetMaxClockInfo, Optional, (nvmlDevice_t d, int type, unsigned int* mhz))          \
  X(nvmlDeviceGetCurrentClocksEventReasons, Optional,                                            \
    (nvmlDevice_t d, unsigned long long* reasons))                                               \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, Optional,                                         \
    (nvmlDevice_t d, unsigned long long* reasons))                                               \
  X(nvmlDeviceGetSupportedClocksThrottleReasons, Optional,                                       \
    (nvmlDevice_t d, unsigned long long* reasons))                                               \
  X(nvmlDeviceGetFanSpeed, Optional, (nvmlDevice_t d, unsigned int* percent))                    \
  X(nvmlDeviceGetPerformanceState, Optional, (nvmlDevice_t d, int* pstate))                      \
  X(nvmlDeviceGetPcieThroughput, Optional,                                                       \
    (nvmlDevice_t d, int counter, unsigned int* kb_per_sec))                                     \
  X(nvmlDeviceGetPcieReplayCounter, Optional, (nvmlDevice_t d, unsigned int* value))             \
  X(nvmlDeviceGetCurrPcieLinkGeneration, Optional, (nvmlDevice_t d, unsigned int* gen))          \
  X(nvmlDeviceGetCurrPcieLinkWidth, Optional, (nvmlDevice_t d, unsigned int* width))             \
  X(nvmlDeviceGetMaxPcieLinkGeneration, Optional, (nvmlDevice_t d, unsigned int* gen))           \
  X(nvmlDeviceGetMaxPcieLinkWidth, Optional, (nvmlDevice_t d, unsigned int* width))              \
  X(nvmlDeviceGetTotalEccErrors, Optional,                                                       \
    (nvmlDevice_t d, int error_type, int counter_type, unsigned long long* count))               \
  X(nvmlDeviceGetMemoryErrorCounter, Optional,                                                   \
    (nvmlDevice_t d, int error_type, int counter_type, int location, unsigned long long* count)) \
  X(nvmlDeviceGetEccMode, Optional, (nvmlDevice_t d, int* current, int* pending))                \
  X(nvmlDeviceGetRetiredPages, Optional,                                                         \
    (nvmlDevice_t d, int cause, unsigned int* count, unsigned long long* addresses))             \
  X(nvmlDeviceGetRetiredPagesPendingStatus, Optional, (nvmlDevice_t d, int* is_pending))         \
  X(nvmlDeviceGetRemappedRows, Optional,                                                         \
    (nvmlDevice_t d, unsigned int* corr, unsigned int* unc, unsigned int* pending,               \
     unsigned int* failure))                                                                     \
  X(nvmlDeviceGetNvLinkState, Optional, (nvmlDevice_t d, unsigned int link, int* is_active))     \
  X(nvmlDeviceGetNvLinkErrorCounter, Optional,                                                   \
    (nvmlDevice_t d, unsigned int link, int counter, unsigned long long* value))                 \
  X(nvmlDeviceGetGpuFabricInfoV, Optional, (nvmlDevice_t d, nvmlGpuFabricInfo_v2_t * info))      \
  X(nvmlEventSetCreate, Optional, (nvmlEventSet_t * set))                                        \
  X(nvmlDeviceGetSupportedEventTypes, Optional, (nvmlDevice_t d, unsigned long long* types))     \
  X(nvmlDeviceRegisterEvents, Optional,                                                          \
    (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set))                              \
  X(nvmlEventSetWait_v2, Optional,                                                               \
    (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeout_ms))                       \
  X(nvmlEventSetFree, Optional, (nvmlEventSet_t set))                                            \
  X(nvmlDeviceGetComputeRunningProcesses_v3, Optional,                                           \
    (nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_v2_t* infos))                          \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, Optional,                                          \
    (nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_v2_t* infos))                          \
  X(nvmlDeviceGetMPSComputeRunningProcesses_v3, Optional,                                        \
    (nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_v2_t* infos))                          \
  X(nvmlDeviceGetProcessUtilization, Optional,                                                   \
    (nvmlDevice_t d, nvmlProcessUtilizationSample_t * samples, unsigned int* count,              \
     unsigned long long last_seen_us))                                                           \
  X(nvmlDeviceGetFieldValues, Optional, (nvmlDevice_t d, int count, nvmlFieldValue_t* values))   \
  X(nvmlDeviceGetMigMode, Optional,                                                              \
    (nvmlDevice_t d, unsigned int* current, unsigned int* pending))                              \
  X(nvmlDeviceGetMaxMigDeviceCount, Optional, (nvmlDevice_t d, unsigned int* count))             \
  X(nvmlDeviceGetMigDeviceHandleByIndex, Optional,                                               \
    (nvmlDevice_t d, unsigned int index, nvmlDevice_t* mig))                                     \
  X(nvmlDeviceIsMigDeviceHandle, Optional, (nvmlDevice_t d, unsigned int* is))                   \
  X(nvmlDeviceGetGpuInstanceId, Optional, (nvmlDevice_t d, unsigned int* id))                    \
  X(nvmlDeviceGetComputeInstanceId, Optional, (nvmlDevice_t d, unsigned int* id))                \
  X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, Optional,                                      \
    (nvmlDevice_t mig, nvmlDevice_t * parent))                                                   \
  X(nvmlDeviceGetAttributes_v2, Optional, (nvmlDevice_t d, nvmlDeviceAttributes_t * attr))       \
  X(nvmlGpmQueryDeviceSupport, Optional, (nvmlDevice_t d, nvmlGpmSupport_t * support))           \
  X(nvmlGpmSampleAlloc, Optional, (nvmlGpmSample_t * sample))                                    \
  X(nvmlGpmSampleGet, Optional, (nvmlDevice_t d, nvmlGpmSample_t sample))                        \
  X(nvmlGpmMigSampleGet, Optional,                                                               \
    (nvmlDevice_t d, unsigned int gpu_instance_id, nvmlGpmSample_t sample))                      \
  X(nvmlGpmSampleFree, Optional, (nvmlGpmSample_t sample))                                       \
  X(nvmlGpmMetricsGet, Optional, (nvmlGpmMetricsGet_t * get))                                    \
  X(nvmlDeviceGetBAR1MemoryInfo, Optional, (nvmlDevice_t d, nvmlBAR1Memory_t * bar1))            \
  X(nvmlDeviceGetVirtualizationMode, Optional, (nvmlDevice_t d, int* mode))                      \
  X(nvmlDeviceGetInforomVersion, Optional, (nvmlDevice_t d, int obj, char* v, unsigned int n))   \
  X(nvmlDeviceGetInforomImageVersion, Optional, (nvmlDevice_t d, char* v, unsigned int n))       \
  X(nvmlDeviceGetInforomConfigurationChecksum, Optional, (nvmlDevice_t d, unsigned int* sum))    \
  X(nvmlDeviceValidateInforom, Optional, (nvmlDevice_t d))                                       \
  X(nvmlDeviceGetHostVgpuMode, Optional, (nvmlDevice_t d, int* mode))                            \
  X(nvmlDeviceGetActiveVgpus, Optional,                                                          \
    (nvmlDevice_t d, unsigned int* count, nvmlVgpuInstance_t* instances))                        \
  X(nvmlVgpuInstanceGetVmID, Optional,                                                           \
    (nvmlVgpuInstance_t v, char* vm_id, unsigned int size, int* vm_id_type))                     \
  X(nvmlVgpuInstanceGetUUID, Optional, (nvmlVgpuInstance_t v, char* uuid, unsigned int size))    \
  X(nvmlVgpuInstanceGetType, Optional, (nvmlVgpuInstance_t v, nvmlVgpuTypeId_t * type))          \
  X(nvmlVgpuTypeGetName, Optional, (nvmlVgpuTypeId_t t, char* name, unsigned int* size))         \
  X(nvmlVgpuTypeGetFramebufferSize, Optional, (nvmlVgpuTypeId_t t, unsigned long long* bytes))   \
  X(nvmlVgpuInstanceGetFbUsage, Optional, (nvmlVgpuInstance_t v, unsigned long long* bytes))     \
  X(nvmlVgpuInstanceGetLicenseInfo_v2, Optional,                                                 \
    (nvmlVgpuInstance_t v, nvmlVgpuLicenseInfo_t * info))                                        \
  X(nvmlVgpuInstanceGetEncoderStats, Optional,                                                   \
    (nvmlVgpuInstance_t v, unsigned int* sessions, unsigned int* fps, unsigned int* latency_us)) \
  X(nvmlDeviceGetVgpuUtilization, Optional,                                                      \
    (nvmlDevice_t d, unsigned long long last_seen_us, int* value_type, unsigned int* count,      \
     nvmlVgpuInstanceUtilizationSample_t* samples))                                              \
  X(nvmlDeviceGetVgpuProcessUtilization, Optional,                                               \
    (nvmlDevice_t d, unsigned long long last_seen_us, unsigned int* count,                       \
     nvmlVgpuProcessUtilizationSample_t* samples))                                               \
  X(nvmlDeviceGetVgpuSchedulerState, Optional,                                                   \
    (nvmlDevice_t d, nvmlVgpuSchedulerGetState_t * state))                                       \
  X(nvmlDeviceGetVgpuSchedulerLog, Optional, (nvmlDevice_t d, nvmlVgpuSchedulerLog_t * log))     \
  X(nvmlDeviceGetVgpuSchedulerCapabilities, Optional,                                            \
    (nvmlDevice_t d, nvmlVgpuSchedulerCapabilities_t * caps))                                    \
  X(nvmlDeviceGetGridLicensableFeatures_v4, Optional,                                            \
    (nvmlDevice_t d, nvmlGridLicensableFeatures_t * features))

extern "C" {
#define GPUSCOPE_NVML_DECLARE(name, need, params) nvmlReturn_t name params;
GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_NVML_DECLARE)
#undef GPUSCOPE_NVML_DECLARE
const char* nvmlErrorString(nvmlReturn_t result);
}

namespace gpuscope::nvml {

// nvmlReturn_t values.
enum Return : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNoPermission = 4,
  kAlreadyInitialized = 5,
  kNotFound = 6,
  kInsufficientSize = 7,
  kInsufficientPower = 8,
  kDriverNotLoaded = 9,
  kTimeout = 10,
  kIrqIssue = 11,
  kLibraryNotFound = 12,
  kFunctionNotFound = 13,
  kCorruptedInforom = 14,
  kGpuIsLost = 15,
  kResetRequired = 16,
  kOperatingSystem = 17,
  kLibRmVersionMismatch = 18,
  kInUse = 19,
  kMemory = 20,
  kNoData = 21,
  kVgpuEccNotSupported = 22,
  kInsufficientResources = 23,
  kFreqNotSupported = 24,
  kArgumentVersionMismatch = 25,
  kDeprecated = 26,
  kNotReady = 27,
  kGpuNotFound = 28,
  kInvalidState = 29,
  kResetTypeNotSupported = 30,
  kUnknown = 999,
};

// NVML's own name for a return code ("NVML_ERROR_GPU_IS_LOST"), for messages
// and for the simulator.
constexpr const char* ReturnName(int code) {
  constexpr const char* kNames[] = {"NVML_SUCCESS",
                                    "NVML_ERROR_UNINITIALIZED",
                                    "NVML_ERROR_INVALID_ARGUMENT",
                                    "NVML_ERROR_NOT_SUPPORTED",
                                    "NVML_ERROR_NO_PERMISSION",
                                    "NVML_ERROR_ALREADY_INITIALIZED",
                                    "NVML_ERROR_NOT_FOUND",
                                    "NVML_ERROR_INSUFFICIENT_SIZE",
                                    "NVML_ERROR_INSUFFICIENT_POWER",
                                    "NVML_ERROR_DRIVER_NOT_LOADED",
                                    "NVML_ERROR_TIMEOUT",
                                    "NVML_ERROR_IRQ_ISSUE",
                                    "NVML_ERROR_LIBRARY_NOT_FOUND",
                                    "NVML_ERROR_FUNCTION_NOT_FOUND",
                                    "NVML_ERROR_CORRUPTED_INFOROM",
                                    "NVML_ERROR_GPU_IS_LOST",
                                    "NVML_ERROR_RESET_REQUIRED",
                                    "NVML_ERROR_OPERATING_SYSTEM",
                                    "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                                    "NVML_ERROR_IN_USE",
                                    "NVML_ERROR_MEMORY",
                                    "NVML_ERROR_NO_DATA",
                                    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
                                    "NVML_ERROR_INSUFFICIENT_RESOURCES",
                                    "NVML_ERROR_FREQ_NOT_SUPPORTED",
                                    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
                                    "NVML_ERROR_DEPRECATED",
                                    "NVML_ERROR_NOT_READY",
                                    "NVML_ERROR_GPU_NOT_FOUND",
                                    "NVML_ERROR_INVALID_STATE",
                                    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED"};
  if (code >= 0 && code < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return kNames[code];
  return "NVML_ERROR_UNKNOWN";
}

// NVML_STRUCT_VERSION(T, v) = sizeof(T) | (v << 24).
constexpr unsigned int StructVersion(std::size_t size, unsigned int v) {
  return static_cast<unsigned int>(size) | (v << 24);
}
constexpr unsigned int kMemoryV2Version = StructVersion(sizeof(nvmlMemory_v2_t), 2);
static_assert(kMemoryV2Version == 0x02000028);
constexpr unsigned int kGpuFabricInfoV2Version = StructVersion(sizeof(nvmlGpuFabricInfo_v2_t), 2);
constexpr unsigned int kGpuFabricInfoV3Version = StructVersion(sizeof(nvmlGpuFabricInfo_v3_t), 3);
static_assert(kGpuFabricInfoV2Version == 0x02000024 && kGpuFabricInfoV3Version == 0x03000028);

// nvmlGpuFabricState_t
enum FabricState : unsigned int {
  kFabricStateNotSupported = 0,
  kFabricStateNotStarted = 1,
  kFabricStateInProgress = 2,
  kFabricStateCompleted = 3,
};
// NVML_GPU_FABRIC_HEALTH_MASK_*: 2-bit fields (0 not supported, 1 true, 2
// false) at these shifts, and a 4-bit incorrect-configuration code at 8
// (0 not supported, 1 none, 2 incorrect system GUID, 3 incorrect chassis
// serial, 4 no partition, 5 insufficient NVLinks).
enum FabricHealthShift : unsigned int {
  kFabricDegradedBwShift = 0,
  kFabricRouteRecoveryShift = 2,
  kFabricRouteUnhealthyShift = 4,
  kFabricAccessTimeoutRecoveryShift = 6,
  kFabricIncorrectConfigShift = 8,
};
constexpr unsigned int kFabricFlagWidthMask = 0x3, kFabricConfigWidthMask = 0xF;
constexpr unsigned int kFabricFlagTrue = 1, kFabricFlagFalse = 2;
constexpr unsigned int kFabricConfigNone = 1;

constexpr unsigned int kInitFlagNoGpus = 1;
constexpr unsigned int kInitFlagNoAttach = 2;

// Buffer sizes NVML documents for its string getters.
constexpr unsigned int kSystemVersionBufferSize = 80;
constexpr unsigned int kDeviceNameBufferSize = 96;
constexpr unsigned int kDeviceUuidBufferSize = 96;
constexpr unsigned int kDeviceSerialBufferSize = 30;
constexpr unsigned int kDeviceVbiosBufferSize = 32;
constexpr unsigned int kProcessNameBufferSize = 256;
constexpr unsigned int kInforomVersionBufferSize = 16;

// vGPU enums and limits (nvml.h).
enum VirtualizationMode : int {
  kVirtualizationNone = 0,
  kVirtualizationPassthrough = 1,
  kVirtualizationVgpu = 2,      // this is a guest's virtual GPU
  kVirtualizationHostVgpu = 3,  // this board hosts vGPUs
  kVirtualizationHostVsga = 4,
};
enum HostVgpuMode : int { kHostVgpuNonSriov = 0, kHostVgpuSriov = 1 };
enum VgpuVmIdType : int { kVgpuVmIdDomainId = 0, kVgpuVmIdUuid = 1 };
// NVML_GRID_LICENSE_STATE_*: 2 is the grace period (unlicensed, still unrestricted).
enum GridLicenseState : unsigned int {
  kLicenseStateUnknown = 0,
  kLicenseStateUninitialized = 1,
  kLicenseStateUnlicensedUnrestricted = 2,
  kLicenseStateUnlicensedRestricted = 3,
  kLicenseStateUnlicensed = 4,
  kLicenseStateLicensed = 5,
};
// NVML_GRID_LICENSE_EXPIRY_*.
enum GridLicenseExpiry : unsigned char {
  kLicenseExpiryNotAvailable = 0,
  kLicenseExpiryInvalid = 1,
  kLicenseExpiryValid = 2,
  kLicenseExpiryNotApplicable = 3,
  kLicenseExpiryPermanent = 4,
};
// nvmlGridLicenseFeatureCode_t.
enum GridLicenseFeature : int { kLicenseFeatureVgpu = 1, kLicenseFeatureCompute = 4 };
// NVML_VGPU_SCHEDULER_POLICY_*.
enum VgpuSchedulerPolicy : unsigned int {
  kVgpuSchedulerUnknown = 0,
  kVgpuSchedulerBestEffort = 1,
  kVgpuSchedulerEqualShare = 2,
  kVgpuSchedulerFixedShare = 3,
};
constexpr unsigned int kVgpuUuidBufferSize = 80;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned int kVgpuVmIdBufferSize = 80;
constexpr unsigned int kVgpuTypeNameBufferSize = 64;  // NVML_VGPU_NAME_BUFFER_SIZE

// nvmlInforomObject_t
enum InforomObject : int { kInforomOem = 0, kInforomEcc = 1, kInforomPower = 2 };

enum Architecture : unsigned int {
  kArchKepler = 2,
  kArchMaxwell = 3,
  kArchPascal = 4,
  kArchVolta = 5,
  kArchTuring = 6,
  kArchAmpere = 7,
  kArchAda = 8,
  kArchHopper = 9,
  kArchBlackwell = 10,
  kArchUnknown = 0xFFFFFFFF,
};

enum Brand : int { kBrandUnknown = 0, kBrandTesla = 2, kBrandNvidia = 14 };

enum ClockType : int { kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3 };
enum TemperatureSensor : int { kTemperatureGpu = 0 };
enum TemperatureThreshold : int {
  kThresholdShutdown = 0,
  kThresholdSlowdown = 1,
  kThresholdMemMax = 2,
  kThresholdGpuMax = 3,
};
enum PcieCounter : int { kPcieTx = 0, kPcieRx = 1 };
enum EccErrorType : int { kEccCorrected = 0, kEccUncorrected = 1 };
enum EccCounterType : int { kEccVolatile = 0, kEccAggregate = 1 };
enum MemoryLocation : int {
  kMemL1 = 0,
  kMemL2 = 1,
  kMemDram = 2,
  kMemRegisterFile = 3,
  kMemTexture = 4,
  kMemTextureShm = 5,
  kMemCbu = 6,
  kMemSram = 7,
};
enum RetiredPageCause : int { kRetiredMultipleSbe = 0, kRetiredDbe = 1 };
enum NvLinkErrorCounter : int {
  kNvLinkReplay = 0,
  kNvLinkRecovery = 1,
  kNvLinkCrcFlit = 2,
  kNvLinkCrcData = 3,
  kNvLinkEccData = 4,
};
enum EnableState : int { kDisabled = 0, kEnabled = 1 };
// nvmlComputeMode_t
enum ComputeMode : int {
  kComputeDefault = 0,
  kComputeExclusiveThread = 1,
  kComputeProhibited = 2,
  kComputeExclusiveProcess = 3,
};

// Clock event (throttle) reason bits; the values never changed.
enum ClockReason : unsigned long long {
  kReasonGpuIdle = 0x1,
  kReasonApplicationsClocksSetting = 0x2,
  kReasonSwPowerCap = 0x4,
  kReasonHwSlowdown = 0x8,
  kReasonSyncBoost = 0x10,
  kReasonSwThermalSlowdown = 0x20,
  kReasonHwThermalSlowdown = 0x40,
  kReasonHwPowerBrakeSlowdown = 0x80,
  kReasonDisplayClockSetting = 0x100,
};

enum EventType : unsigned long long {
  kEventSingleBitEcc = 0x1,
  kEventDoubleBitEcc = 0x2,
  kEventPState = 0x4,
  kEventXidCritical = 0x8,
  kEventClock = 0x10,
  kEventPowerSourceChange = 0x80,
  kEventMigConfigChange = 0x100,
  kEventGpuUnavailable = 0x4000,
  kEventGpuRecoveryAction = 0x8000,
};

enum FieldValueType : int {
  kValueDouble = 0,
  kValueUint = 1,
  kValueUlong = 2,
  kValueUlonglong = 3,
  kValueSlonglong = 4,
  kValueSint = 5,
  kValueUshort = 6,
};

// Field and GPM metric ids: nvml/field_ids.h.
constexpr unsigned int kGpmMetricsGetVersion = 1;
constexpr unsigned int kGpmSupportVersion = 1;

constexpr unsigned int kNoInstanceId = 0xFFFFFFFF;
constexpr unsigned long long kValueNotAvailable = ~0ULL;

// Drivers 535.43.02, 535.54.03 and 535.86.05 write 32-byte process entries
// where the header says 24: the stride a caller must step by.
constexpr std::size_t kProcessInfoStride = sizeof(nvmlProcessInfo_v2_t);
constexpr std::size_t kProcessInfoStrideEarly535 = 32;

}  // namespace gpuscope::nvml
