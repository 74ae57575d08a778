// Client of the container runtime's CRI socket (containerd, CRI-O): which pod
// and container each container id belongs to, so that a GPU process, whose
// cgroup names its container id, is named by pod (the kubelet's pod-resources
// API lists pods without container ids or UIDs).
//
// One RuntimeService/ListContainers call per refresh, for running containers,
// on a fresh channel (a restarted runtime is never talked to through a dead
// connection); the pod comes from the labels the kubelet puts on every
// container it creates. The answer is bounded like the kubelet's (kubelet.h).
// Thread safety: ListContainers is reentrant.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>

#include "gpuscope/status.h"

namespace gpuscope::attribution {

struct CriOptions {
  std::string socket;                        // empty: off
  std::chrono::milliseconds timeout{10000};  // per call
  int max_message_bytes = 16 << 20;          // a node's running containers, with labels
  size_t max_containers = 16384;             // in one answer
};

// A container as the kubelet named it.
struct CriContainer {
  std::string namespace_name, pod, pod_uid, container;
};

// Container id (the runtime's full id) -> its pod. Containers without the
// kubelet's labels (not created by Kubernetes) are left out. Unavailable when
// the socket is missing or the runtime does not answer in time.
Result<std::map<std::string, CriContainer>> ListContainers(const CriOptions& options);

// The container of `id` in `containers`: an exact match, or a unique entry
// whose id starts with `id` (or that `id` starts with: short and long forms).
const CriContainer* FindContainer(const std::map<std::string, CriContainer>& containers,
                                  const std::string& id);

}  // namespace gpuscope::attribution
