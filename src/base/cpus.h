// How many CPUs this process may use: the affinity mask (taskset, a cpuset
// cgroup) capped by a cgroup v2 CPU quota (a container's or a systemd unit's
// `cpu.max`, Kubernetes' CPU limit). std::thread::hardware_concurrency counts
// the machine's CPUs, which is the wrong size for a pool inside a container
// limited to one of them.
//
// Thread safety: only reads /proc and /sys; safe from any thread.
#pragma once

#include <optional>
#include <string_view>

namespace gpuscope::base {

// The tightest `cpu.max` quota, in CPUs, on the way from the cgroup named by
// the `0::/path` line of `proc_self_cgroup` up to `cgroup_root`; nullopt when
// no level sets one ("max") or the files cannot be read.
std::optional<double> CgroupCpuQuota(std::string_view cgroup_root,
                                     std::string_view proc_self_cgroup);

// The CPUs the process may run on, at least 1: the affinity mask's count,
// capped by the quota above rounded up.
unsigned UsableCpus();

}  // namespace gpuscope::base
