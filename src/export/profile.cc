#include "export/profile.h"

namespace gpuscope::prom {

std::optional<Profile> ParseProfile(std::string_view text) {
  if (text == "lean") return Profile::kLean;
  if (text == "full") return Profile::kFull;
  return std::nullopt;
}

std::string_view ProfileName(Profile profile) {
  return profile == Profile::kLean ? "lean" : "full";
}

// kAlways: read by a shipped panel or rule, or the base of one (limits,
// link capabilities). kSparse: zero on a healthy GPU, and only its first
// non-zero value matters to the rules (they test `> 0` or rates of later
// increments). Everything else, and any row added later, is full-only until
// it is placed here: e.g. utilization (DCGM_FI_DEV_GPU_UTIL has it, and the
// rules read rate(gpuscope_gpu_busy_seconds_total), exact at any scrape
// interval), the gpu_idle throttle reason (no panel or rule reads it).
LeanPolicy LeanPolicyOf(Metric metric) {
  switch (metric) {
    using enum Metric;
    case kSmOccupancy:
    case kTensorActive:
    case kDramActive:
    case kBusySeconds:
    case kIdleSeconds:
    case kSmActiveSeconds:
    case kMemoryTotal:
    case kMemoryUsed:
    case kMemoryUsedPeak:
    case kPowerUsage:
    case kEnergyConsumption:
    case kPowerLimit:
    case kSmClock:
    case kMaxSmClock:
    case kGpuTemp:
    case kMemoryTemp:
    case kSlowdownTemp:
    case kGpuMaxTemp:
    case kMemoryMaxTemp:
    case kPcieLinkGen:
    case kPcieLinkGenMax:
    case kPcieLinkWidth:
    case kPcieLinkWidthMax:
    case kPcieTxBytes:
    case kPcieRxBytes:
    case kNvLinkTxBytes:
    case kNvLinkRxBytes:
    case kNvLinkCrcFlitErrors:
    case kNvLinkCrcDataErrors:
    case kNvLinkReplayErrors:
    case kNvLinkRecoveryErrors:
      return LeanPolicy::kAlways;
    case kPcieReplays:
    case kEccSbeVolatile:
    case kEccDbeVolatile:
    case kEccSbeAggregate:
    case kEccDbeAggregate:
    case kRetiredPending:
    case kRemappedCorrectable:
    case kRemappedUncorrectable:
    case kRemappedPending:
    case kRemappedFailure:
    case kRecoveryAction:
    case kThrottleAppClocks:
    case kThrottleSwPowerCap:
    case kThrottleHwSlowdown:
    case kThrottleSyncBoost:
    case kThrottleSwThermal:
    case kThrottleHwThermal:
    case kThrottleHwPowerBrake:
    case kThrottleDisplayClock:
      return LeanPolicy::kSparse;
    case kMemCopyUtil:
      return LeanPolicy::kNoGpm;
    default:
      return LeanPolicy::kFullOnly;
  }
}

std::string_view LeanPolicyName(LeanPolicy policy) {
  switch (policy) {
    case LeanPolicy::kAlways:
      return "always";
    case LeanPolicy::kSparse:
      return "when non-zero";
    case LeanPolicy::kNoGpm:
      return "without GPM";
    case LeanPolicy::kFullOnly:
      break;
  }
  return "full only";
}

}  // namespace gpuscope::prom
