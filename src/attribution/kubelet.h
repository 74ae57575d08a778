// Client of the kubelet's pod-resources API (gRPC over a unix socket): which
// container holds which GPU device id.
//
// Each List call opens a fresh channel, so a kubelet restart (a new socket
// file) never leaves the client on a dead connection or in gRPC's reconnect
// backoff. The receive limit is raised above gRPC's 4 MiB default, since a
// node with a thousand pods answers several MiB (dcgm-exporter issue #509),
// and bounded: an answer over it is refused by gRPC before it is parsed, and
// one listing more device ids than max_device_ids is refused before they are
// copied (the agent's memory stays bounded whatever the socket says).
// Thread safety: ListGpuDevices is reentrant.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "attribution/pod_map.h"
#include "attribution/resource_slices.h"
#include "gpuscope/status.h"

namespace gpuscope::attribution {

struct KubeletOptions {
  std::string socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds timeout{10000};  // per List call
  int max_message_bytes = 16 << 20;          // receive limit
  size_t max_device_ids = 16384;             // in one answer, over all resources
  std::vector<std::string> extra_resources;  // more resource names (or DRA drivers) for GPUs
  // Where the UUIDs of DRA devices are read (resource_slices.h); asked only
  // once the kubelet lists a DRA device.
  ResourceSliceOptions resource_slices;
};

// Every GPU device id granted to a container (see IsGpuResource), and every
// device of a DRA claim of a GPU driver (device_id empty, dra set: see
// resource_slices.h). Unavailable when the socket is missing or the kubelet
// does not answer in time.
Result<std::vector<PodDevice>> ListGpuDevices(const KubeletOptions& options);

}  // namespace gpuscope::attribution
