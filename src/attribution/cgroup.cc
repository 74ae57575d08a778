#include "attribution/cgroup.h"

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::attribution {
namespace {

using Segments = std::span<const std::string_view>;

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

// The segment at `i`, or "" past the end.
std::string_view At(Segments s, size_t i) { return i < s.size() ? s[i] : std::string_view(); }

std::string ValidUid(std::string uid) {
  const bool valid = uid.size() >= 8 && std::all_of(uid.begin(), uid.end(), [](char c) {
                       return c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
  return valid ? uid : "";
}

// "<parent>-pod<uid_with_underscores>.slice" -> "<uid-with-dashes>". `parent`
// is the slice the pod slice sits in ("kubepods" or "kubepods-burstable");
// empty when the path entered the tree below it, and then any of the three
// the kubelet makes is accepted.
std::string SystemdPodUid(std::string_view segment, std::string_view parent) {
  if (!StripSuffix(segment, ".slice")) return "";
  const auto at = segment.rfind("-pod");
  if (at == std::string_view::npos) return "";
  const std::string_view stem = segment.substr(0, at);
  const bool known = parent.empty() ? stem == "kubepods" || stem == "kubepods-besteffort" ||
                                          stem == "kubepods-burstable"
                                    : stem == parent;
  if (!known) return "";
  std::string uid(segment.substr(at + 4));
  std::replace(uid.begin(), uid.end(), '_', '-');
  return ValidUid(std::move(uid));
}

// One segment that names a container: "<runtime-prefix><id>[.scope]", or a
// bare id where the cgroupfs driver puts one.
bool ParseContainer(std::string_view segment, bool bare_id, CgroupOwner& out) {
  struct Prefix {
    std::string_view text, runtime;
  };
  static constexpr Prefix kPrefixes[] = {
      {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"docker-", "docker"}};
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
  if (bare_id && IsContainerId(s)) {
    out.container_id = s;
    return true;
  }
  return false;
}

// How many segments of `prefix` (a layout's fixed top) begin `s`. An absolute
// path must hold all of them; a relative one ("../" first: the process lies
// outside the reader's cgroup namespace) starts at the child of an ancestor
// of the reader's own cgroup, so it may enter the layout at any depth.
std::optional<size_t> Enter(Segments s, bool relative,
                            std::initializer_list<std::string_view> prefix) {
  const std::vector<std::string_view> top(prefix);
  for (size_t skip = 0; skip <= top.size(); ++skip) {
    if (skip > 0 && !relative) return std::nullopt;
    const size_t n = top.size() - skip;
    if (s.size() >= n && std::equal(top.begin() + skip, top.end(), s.begin())) return n;
  }
  return std::nullopt;  // not reached: skip == size matches an empty prefix
}

// kubepods.slice/[kubepods-<qos>.slice/]<parent>-pod<uid>.slice/<runtime>-<id>.scope
std::optional<CgroupOwner> KubepodsSystemd(Segments s, bool relative) {
  const auto entered = Enter(s, relative, {"kubepods.slice"});
  if (!entered) return std::nullopt;
  size_t i = *entered;
  std::string parent = i > 0 ? "kubepods" : "";
  if (At(s, i) == "kubepods-besteffort.slice" || At(s, i) == "kubepods-burstable.slice") {
    parent = std::string(At(s, i).substr(0, At(s, i).size() - 6));
    ++i;
  }
  CgroupOwner out;
  out.pod_uid = SystemdPodUid(At(s, i), parent);
  if (!out.pod_uid.empty()) {
    ++i;
  } else if (i > 0) {
    return std::nullopt;  // entered above the pod: its slice must follow
  }
  if (!ParseContainer(At(s, i), false, out) && out.pod_uid.empty()) return std::nullopt;
  return out;
}

// kubepods/[besteffort|burstable/]pod<uid>/[crio-]<id>   (cgroupfs driver)
std::optional<CgroupOwner> KubepodsCgroupfs(Segments s, bool relative) {
  const auto entered = Enter(s, relative, {"kubepods"});
  if (!entered) return std::nullopt;
  size_t i = *entered;
  if (At(s, i) == "besteffort" || At(s, i) == "burstable") ++i;
  CgroupOwner out;
  std::string_view pod = At(s, i);
  if (StripPrefix(pod, "pod")) out.pod_uid = ValidUid(std::string(pod));
  if (!out.pod_uid.empty()) {
    ++i;
  } else if (i > 0) {
    return std::nullopt;
  }
  if (!ParseContainer(At(s, i), true, out) && out.pod_uid.empty()) return std::nullopt;
  return out;
}

// system.slice/containerd.service/<parent>-pod<uid>.slice:cri-containerd:<id>
// (containerd on cgroup v1 given a systemd-style cgroup path with the
// cgroupfs driver).
std::optional<CgroupOwner> ContainerdColonForm(Segments s, bool relative) {
  const auto entered = Enter(s, relative, {"system.slice", "containerd.service"});
  if (!entered) return std::nullopt;
  const std::string_view segment = At(s, *entered);
  constexpr std::string_view kMarker = ":cri-containerd:";
  const auto at = segment.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  CgroupOwner out;
  out.pod_uid = SystemdPodUid(segment.substr(0, at), "");
  const std::string_view id = segment.substr(at + kMarker.size());
  if (out.pod_uid.empty() || !IsContainerId(id)) return std::nullopt;
  out.container_id = id;
  out.runtime = "containerd";
  return out;
}

// Docker outside Kubernetes: system.slice/docker-<id>.scope or docker/<id>.
std::optional<CgroupOwner> PlainDocker(Segments s, bool relative) {
  CgroupOwner out;
  if (const auto i = Enter(s, relative, {"system.slice"})) {
    if (At(s, *i).starts_with("docker-") && ParseContainer(At(s, *i), false, out)) return out;
  }
  if (const auto i = Enter(s, relative, {"docker"}); i && *i > 0) {
    if (IsContainerId(At(s, *i))) {
      out.container_id = At(s, *i);
      out.runtime = "docker";
      return out;
    }
  }
  return std::nullopt;
}

// "job_<J>" -> "<J>"; "" when the segment is not one.
std::string_view JobId(std::string_view segment) {
  return StripPrefix(segment, "job_") && IsDigits(segment) ? segment : std::string_view();
}

// Slurm, cgroup v2: system.slice/slurmstepd.scope/job_<J>/...
std::optional<CgroupOwner> SlurmV2(Segments s, bool relative) {
  const auto i = Enter(s, relative, {"system.slice", "slurmstepd.scope"});
  if (!i || JobId(At(s, *i)).empty()) return std::nullopt;
  CgroupOwner out;
  out.slurm_job = JobId(At(s, *i));
  return out;
}

// Slurm, cgroup v1: slurm/uid_<U>/job_<J>/...
std::optional<CgroupOwner> SlurmV1(Segments s, bool relative) {
  const auto entered = Enter(s, relative, {"slurm"});
  if (!entered) return std::nullopt;
  size_t i = *entered;
  CgroupOwner out;
  std::string_view uid = At(s, i);
  if (StripPrefix(uid, "uid_") && IsDigits(uid)) {
    out.slurm_uid = uid;
    ++i;
  } else if (i > 0) {
    return std::nullopt;
  }
  out.slurm_job = JobId(At(s, i));
  if (out.slurm_job.empty()) return std::nullopt;
  return out;
}

// The path's segments after its leading "..", and whether there were any;
// nullopt for a path the kernel never writes ("." or ".." further on).
std::optional<std::pair<std::vector<std::string_view>, bool>> Split(std::string_view path) {
  std::vector<std::string_view> out;
  bool relative = false;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const std::string_view segment = path.substr(0, slash);
    if (segment == ".." && out.empty()) {
      relative = true;
    } else if (segment == "." || segment == "..") {
      return std::nullopt;
    } else if (!segment.empty()) {
      out.push_back(segment);
    }
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return std::make_pair(std::move(out), relative);
}

}  // namespace

CgroupOwner ParseCgroupPath(std::string_view path) {
  using Layout = std::optional<CgroupOwner> (*)(Segments, bool);
  static constexpr Layout kLayouts[] = {KubepodsSystemd, KubepodsCgroupfs, ContainerdColonForm,
                                        PlainDocker,     SlurmV2,          SlurmV1};
  const auto split = Split(path);
  if (!split) return {};
  for (Layout layout : kLayouts) {
    if (auto owner = layout(split->first, split->second)) return std::move(*owner);
  }
  return {};
}

CgroupOwner ParseProcCgroup(std::string_view text) {
  CgroupOwner out;
  while (!text.empty()) {
    const std::string_view line = base::PopLine(text);
    // "hierarchy-id:controllers:path"; the path may itself contain ':'.
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    CgroupOwner found = ParseCgroupPath(line.substr(second + 1));
    // A container and its pod come from one line, a job and its user from one.
    if (out.container_id.empty() && out.pod_uid.empty()) {
      out.container_id = std::move(found.container_id);
      out.runtime = std::move(found.runtime);
      out.pod_uid = std::move(found.pod_uid);
    }
    if (out.slurm_job.empty()) {
      out.slurm_job = std::move(found.slurm_job);
      out.slurm_uid = std::move(found.slurm_uid);
    }
  }
  return out;
}

Result<CgroupOwner> ReadProcessCgroup(const std::string& proc_root, unsigned pid) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/cgroup";
  Result<std::string> text = base::ReadRegularFile(path, "cgroup file", kMaxCgroupFileBytes);
  if (!text.ok()) return text.status();
  return ParseProcCgroup(*text);
}

}  // namespace gpuscope::attribution
