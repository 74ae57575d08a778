// The parameters of a `fabric` fault (GB200 NVLink fabric registration and
// health), kept apart from faults.h so that FaultSpec can hold them without
// knowing how they are parsed or reported (sim/fabric.h).
//
// Thread safety: a plain value.
#pragma once

namespace gpuscope::sim {

// NVML's nvmlGpuFabricState_t values.
enum FabricState : unsigned {
  kFabricNotSupported = 0,
  kFabricNotStarted = 1,
  kFabricInProgress = 2,
  kFabricCompleted = 3,
};

// Health-mask issues a fault raises, as bits of FabricFault::issues.
enum FabricIssue : unsigned {
  kIssueDegradedBandwidth = 1,
  kIssueRouteRecovery = 2,
  kIssueRouteUnhealthy = 4,
  kIssueAccessTimeoutRecovery = 8,
};

struct FabricFault {
  unsigned state = kFabricCompleted;  // registration state while the fault is active
  unsigned status = 0;                // nvmlReturn_t of a completed registration; 0 success
  unsigned issues = 0;                // FabricIssue bits
  // NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_*: 1 none, 2..7 a reason.
  unsigned incorrect_configuration = 1;
};

}  // namespace gpuscope::sim
