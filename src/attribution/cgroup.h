// Who owns a process, read from its cgroup: the container (and the runtime
// that named it), the Kubernetes pod, or the Slurm job.
//
// The parser is a pure function of /proc/<pid>/cgroup's text, so tests feed it
// fixtures; ReadProcessCgroup reads the file under an injected /proc root.
//
// Only the layouts that the kubelet, the container runtimes and Slurm create
// are trusted, each from the top of the hierarchy: a user may create cgroups
// of any name under a delegated subtree (user.slice), so a container id or a
// job_ directory found anywhere else names nothing. Trusted (cgroup v1 and v2):
//   /kubepods.slice/[kubepods-<qos>.slice/]kubepods[-<qos>]-pod<uid>.slice/
//       {cri-containerd,crio,docker}-<id>.scope           (systemd driver)
//   /kubepods/[besteffort|burstable/]pod<uid>/[crio-]<id>  (cgroupfs driver)
//   /system.slice/containerd.service/kubepods-...-pod<uid>.slice:cri-containerd:<id>
//   /system.slice/docker-<id>.scope   /docker/<id>         (Docker, no pod)
//   /system.slice/slurmstepd.scope/job_<J>/...             (Slurm, v2)
//   /slurm/uid_<U>/job_<J>/...                             (Slurm, v1)
// Only the segments right after the pod (or job) are read: what a container
// nests below its own cgroup stays that container's.
// A path shown relative to the reader's cgroup namespace ("/../../x", as a
// containerised agent sees processes outside its namespace) starts at a child
// of an ancestor of the reader's own cgroup, so it may enter these layouts
// below their top (at the QoS, pod, container or job level), never elsewhere.
// Thread safety: free functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::attribution {

// /proc/<pid>/cgroup is one line per v1 hierarchy: a few KiB at most.
inline constexpr std::size_t kMaxCgroupFileBytes = 64 << 10;

struct CgroupOwner {
  std::string container_id;  // the runtime's full id (hex), empty when none
  std::string runtime;       // "containerd", "cri-o", "docker", or "" (unknown)
  std::string pod_uid;       // Kubernetes pod UID with dashes, empty when none
  std::string slurm_job;     // Slurm job id ("4242"), empty when none
  std::string slurm_uid;     // Slurm user id when the path names it

  bool empty() const { return container_id.empty() && pod_uid.empty() && slurm_job.empty(); }
};

// Parses the text of /proc/<pid>/cgroup (one "id:controllers:path" per line).
// On cgroup v1 (several lines) a container and its pod come from the first
// line that names either, a Slurm job and its user from the first naming one.
CgroupOwner ParseProcCgroup(std::string_view text);

// Parses one cgroup path such as "/kubepods.slice/.../cri-containerd-<id>.scope".
CgroupOwner ParseCgroupPath(std::string_view path);

// Reads <proc_root>/<pid>/cgroup (base::ReadRegularFile: a FIFO or a file over
// kMaxCgroupFileBytes is an error, never a wait). NotFound when the process
// is gone.
Result<CgroupOwner> ReadProcessCgroup(const std::string& proc_root, unsigned pid);

}  // namespace gpuscope::attribution
