#include "attribution/cgroup.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuscope::attribution {
namespace {

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Container ids are 64 hex characters for containerd, CRI-O and Docker.
bool IsContainerId(std::string_view s) { return s.size() == 64 && IsHex(s); }

bool StripPrefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool StripSuffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

// "pod1234_5678.slice" (systemd) or "pod1234-5678" (cgroupfs) -> "1234-5678".
std::string PodUid(std::string_view segment) {
  std::string_view s = segment.substr(0, segment.find(':'));  // "...slice:cri-containerd:<id>"
  bool systemd = StripSuffix(s, ".slice");
  const auto at = s.rfind("-pod");
  if (at != std::string_view::npos) {
    s.remove_prefix(at + 4);
  } else if (!StripPrefix(s, "pod")) {
    return "";
  }
  std::string uid(s);
  if (systemd) std::replace(uid.begin(), uid.end(), '_', '-');
  const bool valid = uid.size() >= 8 && std::all_of(uid.begin(), uid.end(), [](char c) {
                       return c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
  return valid ? uid : "";
}

// One path segment that names a container: "<runtime-prefix><id>[.scope]",
// "...:<runtime>:<id>" (containerd with the systemd driver on v1), or a bare
// id under a pod (cgroupfs driver).
bool ParseContainer(std::string_view segment, bool under_pod, CgroupOwner& out) {
  struct Prefix {
    std::string_view text, runtime;
  };
  static constexpr Prefix kPrefixes[] = {
      {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"docker-", "docker"}};
  static constexpr Prefix kColon[] = {
      {":cri-containerd:", "containerd"}, {":crio:", "cri-o"}, {":docker:", "docker"}};
  for (const auto& p : kColon) {
    const auto at = segment.find(p.text);
    if (at == std::string_view::npos) continue;
    std::string_view id = segment.substr(at + p.text.size());
    if (!IsContainerId(id)) return false;
    out.container_id = id;
    out.runtime = p.runtime;
    return true;
  }
  std::string_view s = segment;
  StripSuffix(s, ".scope");
  for (const auto& p : kPrefixes) {
    std::string_view id = s;
    if (StripPrefix(id, p.text) && IsContainerId(id)) {
      out.container_id = id;
      out.runtime = p.runtime;
      return true;
    }
  }
  if (under_pod && IsContainerId(s)) {
    out.container_id = s;
    return true;
  }
  return false;
}

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    std::string_view segment = path.substr(0, slash);
    if (!segment.empty()) out.push_back(segment);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

}  // namespace

CgroupOwner ParseCgroupPath(std::string_view path) {
  CgroupOwner out;
  bool under_kubepods = false, under_pod = false, under_slurm = false;
  std::string_view previous;
  for (std::string_view segment : Segments(path)) {
    if (segment.starts_with("kubepods")) under_kubepods = true;
    if (under_kubepods && out.pod_uid.empty()) {
      out.pod_uid = PodUid(segment);
      under_pod = !out.pod_uid.empty();
    }
    if (out.container_id.empty() && ParseContainer(segment, under_pod, out)) {
      // found the container (a v1 segment may name both pod and container)
    } else if (out.container_id.empty() && previous == "docker" && IsContainerId(segment)) {
      out.container_id = segment;  // plain Docker, cgroupfs driver: "/docker/<id>"
      out.runtime = "docker";
    } else if (segment.starts_with("slurm")) {
      under_slurm = true;
    } else if (under_slurm) {
      std::string_view s = segment;
      if (StripPrefix(s, "job_") && IsDigits(s) && out.slurm_job.empty()) out.slurm_job = s;
      s = segment;
      if (StripPrefix(s, "uid_") && IsDigits(s) && out.slurm_uid.empty()) out.slurm_uid = s;
    }
    previous = segment;
  }
  return out;
}

CgroupOwner ParseProcCgroup(std::string_view text) {
  CgroupOwner out;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    // "hierarchy-id:controllers:path"; the path may itself contain ':'.
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const CgroupOwner found = ParseCgroupPath(line.substr(second + 1));
    if (out.container_id.empty()) {
      out.container_id = found.container_id;
      out.runtime = found.runtime;
    }
    if (out.pod_uid.empty()) out.pod_uid = found.pod_uid;
    if (out.slurm_job.empty()) out.slurm_job = found.slurm_job;
    if (out.slurm_uid.empty()) out.slurm_uid = found.slurm_uid;
  }
  return out;
}

Result<CgroupOwner> ReadProcessCgroup(const std::string& proc_root, unsigned pid) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/cgroup";
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseProcCgroup(text.str());
}

}  // namespace gpuscope::attribution
