// The `workload` identity: the name that stays the same across restarts of the
// same work, so baselines can key on it.
//
// Kubernetes names a controller's pods "<owner>-<suffix>": a Deployment's
// "<deployment>-<pod-template-hash>-<5 random>", a Job's and a DaemonSet's
// "<name>-<5 random>", an indexed Job's "<job>-<index>-<5 random>", a
// CronJob's Job "<cronjob>-<minutes since epoch>-<5 random>", a StatefulSet's
// "<name>-<ordinal>". The random parts use Kubernetes' alphabet without vowels
// ("bcdfghjklmnpqrstvwxz2456789"), so a word a person chose rarely looks like
// one. The pod-resources API carries no owner references, so the owner is
// recovered from the name.
// Thread safety: free functions.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::attribution {

// "trainer-7d9f8c6b4-x2kq9" -> "trainer"; "db-0" -> "db"; "job-q7x4z" -> "job".
// A name without a recognisable suffix is returned as it is.
std::string PodOwnerName(std::string_view pod);

// Precedence: the pod's owner, else the Slurm job name, else the Slurm job id,
// else the process name; empty when nothing is known.
std::string WorkloadName(std::string_view pod, std::string_view slurm_job_name,
                         std::string_view slurm_job_id, std::string_view process_name);

}  // namespace gpuscope::attribution
