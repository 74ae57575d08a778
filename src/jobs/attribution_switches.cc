#include "jobs/attribution_switches.h"

#include <vector>

namespace gpuscope::jobs {
namespace {

using nlohmann::json;

// One switch of the agent, what it names, and for which holder kinds.
struct Switch {
  bool AttributionSwitches::*on;
  const char* key;    // in /api/v1/jobs' "attribution"
  const char* flag;   // what turns it on (serve's flag), as the message says it
  const char* kinds;  // holder kinds it can name: "pod workload"
};

// clang-format off
constexpr Switch kSwitches[] = {
  {&AttributionSwitches::kubelet, "kubelet", "-k (Kubernetes pods)", "pod workload"},
  {&AttributionSwitches::container_runtime, "container_runtime",
   "--container-runtime-socket PATH (each container's pod)", "pod workload"},
  {&AttributionSwitches::hpc_job_mapping_dir, "hpc_job_mapping_dir",
   "--hpc-job-mapping-dir DIR (Slurm jobs)", "job workload"},
  {&AttributionSwitches::process_cgroups, "process_cgroups",
   "the GPU processes' cgroups (always read: a Slurm job's, when a process runs in one)",
   "job workload"},
  {&AttributionSwitches::process_names, "process_names",
   "--process-names (workloads named after their processes)", "workload"},
};
// clang-format on

bool Names(const Switch& s, std::string_view kind) {
  return kind.empty() || std::string_view(s.kinds).find(kind) != std::string_view::npos;
}

std::string Join(const std::vector<std::string>& parts, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += i + 1 == parts.size() ? std::string(last) : ", ";
    out += parts[i];
  }
  return out;
}

std::string KindWords(std::string_view kind) {
  if (kind == "job") return "Slurm job";
  if (kind == "pod") return "pod";
  if (kind == "workload") return "workload";
  return "pod, Slurm job or workload";
}

}  // namespace

json SwitchesToJson(const AttributionSwitches& on) {
  json out = json::object();
  for (const Switch& s : kSwitches) out[s.key] = on.*s.on;
  return out;
}

std::optional<AttributionSwitches> SwitchesFromJson(const json& answer) {
  if (!answer.is_object() || !answer.contains("attribution")) return std::nullopt;
  const json& j = answer["attribution"];
  if (!j.is_object()) return std::nullopt;
  AttributionSwitches out;
  for (const Switch& s : kSwitches) {
    if (!j.contains(s.key) || !j[s.key].is_boolean()) return std::nullopt;
    out.*s.on = j[s.key].get<bool>();
  }
  return out;
}

std::string WhyNoHolders(const std::optional<AttributionSwitches>& on, std::string_view kind) {
  const std::string what = KindWords(kind);
  std::vector<std::string> enabled, disabled;
  for (const Switch& s : kSwitches) {
    if (!Names(s, kind)) continue;
    (on && (*on).*s.on ? enabled : disabled).push_back(s.flag);
  }
  if (!on) {
    return "the agent does not say which attribution sources it runs (an older gpuscope); a " +
           what + " is named only by " + Join(disabled, " or ");
  }
  // The cgroups are always read: only a switch someone turned on is a reason to wait.
  bool cgroups = false;
  for (const Switch& s : kSwitches) {
    cgroups = cgroups || (s.on == &AttributionSwitches::process_cgroups && on->process_cgroups &&
                          Names(s, kind));
  }
  if (enabled.size() == (cgroups ? 1u : 0u)) {
    return "no attribution source that names a " + what + " is on" +
           (cgroups ? " (the GPU processes' cgroups, always read, named none)" : "") +
           ": start the agent with " + Join(disabled, " or ") + " (docs/attribution.md)";
  }
  return "its attribution sources that name a " + what + " (" + Join(enabled, ", ") +
         ") named none on its GPUs: none held a GPU since the agent started, or it ended "
         "longer ago than --jobs-keep-ended";
}

}  // namespace gpuscope::jobs
