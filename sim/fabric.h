// GB200 NVLink fabric in the simulator: what nvmlDeviceGetGpuFabricInfo(V)
// reports at a scenario time (registration state, status, clique, cluster
// UUID, health mask), the `fabric` fault that changes it, and per-link NVLink
// state over time (an `nvlink-down` fault takes a link, or all, down; after
// `until` the link trains for `train_s` seconds, reading inactive, then comes
// back up). Only presets with `fabric` set answer; the others say NOT_SUPPORTED.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "faults.h"
#include "gpuscope/status.h"
#include "physics.h"
#include "presets.h"
#include "yaml_fields.h"

namespace gpuscope::sim {

struct FabricReport {
  std::array<unsigned char, 16> cluster_uuid{};
  unsigned state = kFabricNotSupported;
  unsigned status = 0;  // nvmlReturn_t
  unsigned clique_id = 0;
  unsigned health_mask = 0;
  unsigned health_summary = 0;  // 1 healthy, 2 unhealthy, 3 limited capacity (v3)
};

// The fabric of a GPU with these faults at scenario time t. Every GPU of a
// scenario shares one cluster UUID (from the seed) and clique 1; with no
// fabric fault active the registration is complete and healthy. A link still
// training (nvlink-down's train_s) holds the registration in progress.
FabricReport FabricAt(uint64_t seed, const std::vector<FaultSpec>& faults, double t);

// True while an nvlink-down fault holds its link(s) down or training at t.
bool LinkDownAt(const FaultSpec& f, double t);
// Marks the links an nvlink-down fault holds down or training at t.
void MarkLinksDown(const FaultSpec& f, double t, unsigned links, std::array<bool, kMaxLinks>& down);

// A `fabric` fault's YAML keys: state (not-started, in-progress, completed),
// status (an nvmlReturn_t), degraded_bandwidth, route_recovery,
// route_unhealthy, access_timeout_recovery (bools), incorrect_configuration
// (none, incorrect-sysguid, incorrect-chassis-sn, no-partition,
// insufficient-nvlinks).
Status FabricFaultParams(FieldReader& r, FabricFault* f);
// Control words after "fabric": an issue (degraded-bandwidth, route-recovery,
// route-unhealthy, access-timeout-recovery), or "state <name>", "status
// <code>", "incorrect-configuration <name>".
Status FabricFaultFromWords(const std::vector<std::string>& words, FabricFault* f);

}  // namespace gpuscope::sim
