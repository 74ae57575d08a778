// Who owns a process, read from its cgroup: the container (and the runtime
// that named it), the Kubernetes pod, or the Slurm job.
//
// The parser is a pure function of /proc/<pid>/cgroup's text, so tests feed it
// fixtures; ReadProcessCgroup reads the file under an injected /proc root.
// Understood layouts (cgroup v1 and v2, systemd and cgroupfs drivers):
//   .../kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope
//   .../kubepods/burstable/pod<uid>/<id>                   (cgroupfs driver)
//   ...:cri-containerd:<id>   crio-<id>.scope   docker-<id>.scope   /docker/<id>
//   .../slurm/uid_<U>/job_<J>/step_<S>/...                 (Slurm, v1)
//   .../slurmstepd.scope/job_<J>/step_<S>/...              (Slurm, v2)
// Thread safety: free functions.
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::attribution {

struct CgroupOwner {
  std::string container_id;  // the runtime's full id (hex), empty when none
  std::string runtime;       // "containerd", "cri-o", "docker", or "" (unknown)
  std::string pod_uid;       // Kubernetes pod UID with dashes, empty when none
  std::string slurm_job;     // Slurm job id ("4242"), empty when none
  std::string slurm_uid;     // Slurm user id when the path names it

  bool empty() const { return container_id.empty() && pod_uid.empty() && slurm_job.empty(); }
};

// Parses the text of /proc/<pid>/cgroup (one "id:controllers:path" per line).
// Fields found on several lines (cgroup v1) are taken from the first line
// that names them.
CgroupOwner ParseProcCgroup(std::string_view text);

// Parses one cgroup path such as "/kubepods.slice/.../cri-containerd-<id>.scope".
CgroupOwner ParseCgroupPath(std::string_view path);

// Reads <proc_root>/<pid>/cgroup. NotFound when the process is gone.
Result<CgroupOwner> ReadProcessCgroup(const std::string& proc_root, unsigned pid);

}  // namespace gpuscope::attribution
