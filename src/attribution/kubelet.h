// Client of the kubelet's pod-resources API (gRPC over a unix socket): which
// container holds which GPU device id.
//
// Each List call opens a fresh channel, so a kubelet restart (a new socket
// file) never leaves the client on a dead connection or in gRPC's reconnect
// backoff. The receive limit is raised far above gRPC's 4 MiB default: a node
// with a thousand pods answers several MiB (dcgm-exporter issue #509).
// Thread safety: ListGpuDevices is reentrant.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "attribution/pod_map.h"
#include "gpuscope/status.h"

namespace gpuscope::attribution {

struct KubeletOptions {
  std::string socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds timeout{10000};   // per List call
  int max_message_bytes = 256 * 1024 * 1024;  // receive limit
  std::vector<std::string> extra_resources;   // more resource names to treat as GPUs
};

// Every GPU device id granted to a container (see IsGpuResource). Unavailable
// when the socket is missing or the kubelet does not answer in time.
Result<std::vector<PodDevice>> ListGpuDevices(const KubeletOptions& options);

}  // namespace gpuscope::attribution
