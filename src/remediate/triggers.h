// The remediation triggers: which health findings make gpuscope act on the
// node (drain it in Slurm, mark it in Kubernetes), one row each with its name
// (the --remediate-findings word), what it means, whether it acts by default
// and the runbook its reason links. docs/runbooks.md shows the same table.
//
// Only faults that make the GPU unusable until someone repairs it are rows:
// a lost GPU, the XIDs that NVIDIA's catalog calls fatal for the board
// (79, 48, 94, 95, 119, 120), a failed or pending row remap, and the driver's
// recovery action (reset, reboot). Thermal throttling and the efficiency
// findings (diagnoses, KPIs) are never rows: a hot or idle GPU is not broken,
// and draining for it would turn a slowdown into an outage. NVLink down acts
// only when enabled (a node whose jobs need NVLink), never by default; so does
// an unusable NVLink fabric (GB200: registration failed, a route unhealthy, an
// incorrect configuration), since one switch-tray fault reaches every node of
// the rack. A registration still in progress or not yet started (a node that
// is booting) never acts.
//
// FindFaults reads one cycle's health report and snapshot (pure).
//
// Thread safety: constexpr data and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "health/checks.h"

namespace gpuscope::remediate {

enum class Finding : uint8_t {
  kXid79,
  kGpuLost,
  kXid48,
  kXid94,
  kXid95,
  kXid119,
  kXid120,
  kRowRemapFailure,
  kRowRemapPending,
  kRecoveryReset,
  kRecoveryReboot,
  kNvlinkDown,
  kFabricUnusable,
};

struct Trigger {
  Finding finding;
  std::string_view name;  // "xid_79"
  std::string_view what;  // "XID 79" (the reason's words)
  bool on_by_default;
  std::string_view runbook;  // the file under docs/runbooks/
};

inline constexpr std::array<Trigger, 13> kTriggers = {{
    {Finding::kXid79, "xid_79", "XID 79", true, "GpuFallenOffBus.md"},
    {Finding::kGpuLost, "gpu_lost", "GPU lost", true, "GpuFallenOffBus.md"},
    {Finding::kXid48, "xid_48", "XID 48", true, "GpuDoubleBitEccError.md"},
    {Finding::kXid94, "xid_94", "XID 94", true, "GpuContainedEccError.md"},
    {Finding::kXid95, "xid_95", "XID 95", true, "GpuUncontainedEccError.md"},
    {Finding::kXid119, "xid_119", "XID 119", true, "GpuCriticalXid.md"},
    {Finding::kXid120, "xid_120", "XID 120", true, "GpuCriticalXid.md"},
    {Finding::kRowRemapFailure, "row_remap_failure", "row remap failure", true,
     "GpuRowRemapFailure.md"},
    {Finding::kRowRemapPending, "row_remap_pending", "row remap pending", true,
     "GpuRowRemapPending.md"},
    {Finding::kRecoveryReset, "recovery_reset", "recovery action: GPU reset", true,
     "GpuRecoveryActionRequired.md"},
    {Finding::kRecoveryReboot, "recovery_reboot", "recovery action: node reboot", true,
     "GpuRecoveryActionRequired.md"},
    {Finding::kNvlinkDown, "nvlink_down", "NVLink down", false, "GpuNvlinkDown.md"},
    {Finding::kFabricUnusable, "fabric_unusable", "NVLink fabric unusable", false,
     "GpuFabricUnhealthy.md"},
}};

// Rows are in enum order, so TriggerOf is an index (checked at compile time).
constexpr bool TriggersInEnumOrder() {
  for (std::size_t i = 0; i < kTriggers.size(); ++i) {
    if (static_cast<std::size_t>(kTriggers[i].finding) != i) return false;
  }
  return true;
}
static_assert(TriggersInEnumOrder(), "kTriggers must list the findings in enum order");

inline const Trigger& TriggerOf(Finding f) { return kTriggers[static_cast<std::size_t>(f)]; }

// The findings that act.
using FindingSet = std::set<Finding>;
FindingSet DefaultFindings();
// "default", or a comma-separated list of trigger names ("xid_79,gpu_lost");
// "default,nvlink_down" adds to the defaults. An unknown name is an error
// that lists the known ones.
Result<FindingSet> ParseFindings(std::string_view text);

// One finding standing on one GPU.
struct Fault {
  Finding finding;
  unsigned gpu = 0;  // NVML index
  std::string uuid;

  // "xid_79/GPU-..." (one action per key while it stands)
  std::string Key() const;
  // "XID 79 on GPU 3 (GPU-...)"
  std::string Describe() const;
  // The full runbook URL of its trigger.
  std::string Runbook() const;
};

// The faults of `enabled` findings standing in one cycle, in GPU then table
// order. `snapshot` gives the row-remap and recovery-action values (samples
// parallel to report.gpus[i].slot).
std::vector<Fault> FindFaults(const health::HealthReport& report, const Snapshot& snapshot,
                              const FindingSet& enabled);

}  // namespace gpuscope::remediate
