// Health as Prometheus families, handed to the exporter's Renderer as extra
// families (export/family.h), and the event counts folded into a snapshot.
//
// ToFamilies writes, per whole GPU (native GPU labels gpu, uuid first):
//   gpuscope_gpu_health{check}          gauge: 0 ok, 1 warn, 2 fail, one series
//                                       per evaluated check (memory, pcie,
//                                       nvlink, thermal, power, xid, driver, fabric)
//   gpuscope_collector_stale            gauge: 1 when the GPU's values are stale
//                                       (a hung call, or no good read for
//                                       stale_after_seconds)
//   DCGM_EXP_XID_ERRORS_COUNT{xid, window_size_in_ms}
//                                       XIDs within the sliding window (dcgm
//                                       labels first), only when the counters
//                                       file enables it (xid_count_window)
//   DCGM_EXP_GPU_HEALTH_STATUS{health_watch, health_error_code}
//                                       per DCGM watch system that a gpuscope
//                                       check covers (PCIE, NVLINK, MEM,
//                                       THERMAL, POWER, DRIVER): 0 pass, 10
//                                       warn, 20 fail, as DCGM's results; only
//                                       when the counters file enables it
// gpuscope_gpu_lost, gpuscope_xid_errors_total{xid} and DCGM_FI_DEV_XID_ERRORS
// are rendered by the exporter itself from the snapshot. The event thread's
// XIDs reach a snapshot only through ApplyEvents, which the health step of
// serve and `gpuscope health` runs on a snapshot copy (serve/health.h).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "export/builtin_families.h"
#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "health/checks.h"
#include "health/events.h"

namespace gpuscope::health {

struct FamilyOptions {
  // Render DCGM_EXP_XID_ERRORS_COUNT (the counters file lists it).
  bool xid_count_window = false;
  prom::FamilyType xid_count_type = prom::kXidWindow.type;  // the file's type
  std::string xid_count_help = std::string(prom::kXidWindow.help);
  // Render DCGM_EXP_GPU_HEALTH_STATUS (the counters file lists it).
  bool health_status = false;
  prom::FamilyType health_status_type = prom::kGpuHealthStatus.type;
  std::string health_status_help = std::string(prom::kGpuHealthStatus.help);
};

std::vector<prom::Family> ToFamilies(const HealthReport& report, const FamilyOptions& options = {});

// Sets xid_counts and kXidLast (DCGM_FI_DEV_XID_ERRORS; 0 before the first
// XID) on each whole GPU's sample (for a GPU present only as MIG instances: its
// first instance) from the event state. GPUs the event thread knows nothing
// about are untouched.
void ApplyEvents(const EventState& events, Snapshot& snapshot);

}  // namespace gpuscope::health
