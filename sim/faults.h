// Fault kinds the simulator can inject, their parameters, and the parsers that
// build them from control-channel words. Scenario YAML builds the same
// FaultSpec in scenario.cc.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fabric_fault.h"
#include "gpuscope/status.h"

namespace gpuscope::sim {

enum class FaultKind {
  kXid,              // instant: XID event, last XID
  kEccSbe,           // instant: corrected ECC errors
  kEccDbe,           // instant: uncorrected ECC error, XID 48, retire page / remap row
  kRowRemapFailure,  // instant: remap failure flag, XID 64
  kLost,             // every call on the GPU answers GPU_IS_LOST while active
  kCoolingFailure,   // thermal resistance x factor
  kPowerCap,         // enforced power limit = watts
  kPowerBrake,       // HW power brake: clocks forced down
  kPcieDowngrade,    // link gen/width below max, replays grow
  kNvlinkErrors,     // CRC/replay/recovery counters grow on a link (or all)
  kNvlinkDown,       // one link inactive
  kMemoryLeak,       // used memory grows at rate until full
  kHang,             // a named NVML function (or any) sleeps per call
  kRecoveryAction,   // field 230 value, RecoveryAction event + XID 154
  kFail,             // a named NVML function (or any) answers an error code
  kXidStorm,         // `rate` XID events per second while active (storm.h)
  kFabric,           // NVLink fabric registration state and health (sim/fabric.h)
};

constexpr double kForever = std::numeric_limits<double>::infinity();

struct FaultSpec {
  FaultKind kind = FaultKind::kXid;
  double at = 0;            // scenario seconds
  double until = kForever;  // scenario seconds; active while at <= t < until
  unsigned xid = 0;
  unsigned count = 1;                           // ECC errors
  double factor = 3.0;                          // cooling failure: thermal resistance multiplier
  double watts = 0;                             // power cap
  unsigned gen = 3, width = 8;                  // PCIe downgrade
  double replay_rate = 2.0;                     // PCIe replays/s; NVLink replays/s
  int link = -1;                                // NVLink: -1 all links
  double train_s = 0;                           // nvlink-down: training after until, s
  double crc_rate = 10.0, recovery_rate = 0.1;  // NVLink errors/s
  double rate_mib_s = 256;                      // memory leak
  std::string function = "any";                 // hang, fail
  double seconds = 10;                          // hang: wall seconds per call
  int code = 999;                               // fail: nvmlReturn_t (999 NVML_ERROR_UNKNOWN)
  unsigned action = 1;                          // recovery action 0..4
  double rate = 1000;                           // xid-storm: events per second
  FabricFault fabric;                           // fabric
};

// Instant faults act once at their time; the others last until cleared.
bool IsInstant(FaultKind kind);

// "cooling-failure" -> kind. Accepts every name in FaultKindName.
bool ParseFaultKind(std::string_view name, FaultKind* kind);
const char* FaultKindName(FaultKind kind);

// "gpu-reset" or "1" -> 1. Names: none, gpu-reset, node-reboot, drain-p2p,
// drain-and-reset.
bool ParseRecoveryAction(std::string_view text, unsigned* action);

// Builds a fault from control words after the GPU: {"xid", "79"},
// {"ecc", "dbe"}, {"hang", "nvmlDeviceGetPowerUsage", "20"},
// {"fail", "nvmlDeviceGetPowerUsage", "999"}. at is left 0.
Result<FaultSpec> FaultFromWords(const std::vector<std::string>& words);

}  // namespace gpuscope::sim
