#include "attribution/workload.h"

#include <algorithm>

namespace gpuscope::attribution {
namespace {

// Kubernetes' rand.String alphabet (k8s.io/apimachinery util/rand).
constexpr std::string_view kGeneratedAlphabet = "bcdfghjklmnpqrstvwxz2456789";

bool IsGenerated(std::string_view s, size_t min_size, size_t max_size) {
  return s.size() >= min_size && s.size() <= max_size &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return kGeneratedAlphabet.find(c) != std::string_view::npos; });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Splits "a-b-c" into "a-b" and "c"; false when there is no '-' (or it leads).
bool PopLast(std::string_view& name, std::string_view& last) {
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return false;
  last = name.substr(dash + 1);
  name = name.substr(0, dash);
  return true;
}

}  // namespace

std::string PodOwnerName(std::string_view pod) {
  std::string_view owner = pod, last;
  if (!PopLast(owner, last)) return std::string(pod);
  if (IsGenerated(last, 5, 5)) {
    // Deployment (template hash), indexed Job or CronJob (a number) before it.
    std::string_view head = owner, previous;
    if (PopLast(head, previous) && (IsDigits(previous) || IsGenerated(previous, 6, 10))) {
      return std::string(head);
    }
    return std::string(owner);
  }
  if (IsDigits(last)) return std::string(owner);  // StatefulSet ordinal
  return std::string(pod);
}

std::string WorkloadName(std::string_view pod, std::string_view slurm_job_name,
                         std::string_view slurm_job_id, std::string_view process_name) {
  if (!pod.empty()) return PodOwnerName(pod);
  if (!slurm_job_name.empty()) return std::string(slurm_job_name);
  if (!slurm_job_id.empty()) return std::string(slurm_job_id);
  return std::string(process_name);
}

}  // namespace gpuscope::attribution
