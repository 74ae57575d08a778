// NVML field value ids (NVML_FI_DEV_*) and GPM metric ids (NVML_GPM_METRIC_*)
// as plain integer constants, from shared/reference/nvml-abi.md. No NVML C
// type is named here, so the metric catalog and the collect readers name the
// ids they read without the ABI header; abi.h includes this file.
//
// Thread safety: constants only.
#pragma once

namespace gpuscope::nvml {

// Stable NVML_FI_DEV_* field ids (never 199/200, nor 251..273 on a driver
// older than kFiClocksEventMinDriver: their meaning changed between branches).
enum FieldId : unsigned int {
  kFiEccCurrent = 1,
  kFiEccPending = 2,
  kFiEccSbeVolTotal = 3,
  kFiEccDbeVolTotal = 4,
  kFiEccSbeAggTotal = 5,
  kFiEccDbeAggTotal = 6,
  kFiRetiredSbe = 29,
  kFiRetiredDbe = 30,
  kFiRetiredPending = 31,
  kFiNvLinkCrcFlitErrorTotal = 38,
  kFiNvLinkCrcDataErrorTotal = 45,
  kFiNvLinkReplayErrorTotal = 52,
  kFiNvLinkRecoveryErrorTotal = 59,
  kFiPerfPolicyPower = 74,
  kFiPerfPolicyThermal = 75,
  kFiPerfPolicySyncBoost = 76,
  kFiPerfPolicyBoardLimit = 77,
  kFiPerfPolicyLowUtilization = 78,
  kFiPerfPolicyReliability = 79,
  kFiMemoryTemp = 82,
  kFiTotalEnergyConsumption = 83,
  kFiNvLinkLinkCount = 91,
  kFiPcieReplayCounter = 94,
  kFiNvLinkThroughputDataTx = 138,
  kFiNvLinkThroughputDataRx = 139,
  kFiNvLinkThroughputRawTx = 140,
  kFiNvLinkThroughputRawRx = 141,
  kFiRemappedCor = 142,
  kFiRemappedUnc = 143,
  kFiRemappedPending = 144,
  kFiRemappedFailure = 145,
  kFiPowerAverage = 185,
  kFiPowerInstant = 186,
  kFiGpuRecoveryAction = 230,
  // NVML_FI_DEV_CLOCKS_EVENT_REASON_*: cumulative ns each reason held the
  // clocks down, as nvidia-smi prints them (SW_POWER_CAP is 74, SYNC_BOOST 76).
  kFiClocksEventSwThermal = 251,
  kFiClocksEventHwThermal = 252,
  kFiClocksEventHwPowerBrake = 253,
};
// The first driver branch whose nvml.h defines ids 251..253 as above.
constexpr unsigned int kFiClocksEventMinDriver = 560;
// Scope of a per-link NVLink field: the sum over every link.
constexpr unsigned int kFieldScopeAllLinks = 0xFFFFFFFF;

// NVML_GPM_METRIC_* ids.
enum GpmMetricId : unsigned int {
  kGpmGraphicsUtil = 1,
  kGpmSmUtil = 2,
  kGpmSmOccupancy = 3,
  kGpmIntegerUtil = 4,
  kGpmAnyTensorUtil = 5,
  kGpmDfmaTensorUtil = 6,
  kGpmHmmaTensorUtil = 7,
  kGpmImmaTensorUtil = 9,
  kGpmDramBwUtil = 10,
  kGpmFp64Util = 11,
  kGpmFp32Util = 12,
  kGpmFp16Util = 13,
  kGpmPcieTxPerSec = 20,
  kGpmPcieRxPerSec = 21,
  kGpmNvLinkTotalRxPerSec = 60,
  kGpmNvLinkTotalTxPerSec = 61,
};

}  // namespace gpuscope::nvml
