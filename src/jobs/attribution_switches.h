// Which attribution sources an agent runs, and what to tell a user whose
// `gpuscope report` found no holder: the ledger can only hold the pods, Slurm
// jobs and workloads that some source named, so an empty answer from an agent
// without -k, --hpc-job-mapping-dir or --process-names is not "nobody used the
// GPUs" but "nothing could say who did" (docs/reports.md).
//
// /api/v1/jobs carries the switches as {"attribution": {"kubelet": false,
// ...}} (docs/api.md); an older agent's answer has none, and the explanation
// then lists every switch.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::jobs {

struct AttributionSwitches {
  bool kubelet = false;              // -k: the kubelet's pod-resources grants
  bool container_runtime = false;    // --container-runtime-socket: each container's pod
  bool hpc_job_mapping_dir = false;  // --hpc-job-mapping-dir: Slurm's per-GPU job files
  bool process_cgroups = true;       // always on: the Slurm job in a GPU process's cgroup
  bool process_names = false;        // --process-names: workloads named after processes
};

nlohmann::json SwitchesToJson(const AttributionSwitches& on);
// The "attribution" member of a /api/v1/jobs answer; nullopt when absent or
// malformed (an older agent).
std::optional<AttributionSwitches> SwitchesFromJson(const nlohmann::json& answer);

// Why an agent's ledger holds no holder of `kind` ("job", "pod", "workload",
// or "" for any): which sources are on, and which switch would name them.
std::string WhyNoHolders(const std::optional<AttributionSwitches>& on, std::string_view kind);

}  // namespace gpuscope::jobs
