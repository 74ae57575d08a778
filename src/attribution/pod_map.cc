#include "attribution/pod_map.h"

#include <algorithm>
#include <charconv>

namespace gpuscope::attribution {
namespace {

bool ParseUnsigned(std::string_view s, unsigned& out) {
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return error == std::errc() && end == s.data() + s.size() && !s.empty();
}

// Removes a sharing suffix ("::3" or "/vgpu3") and returns it.
std::string TakeReplica(std::string_view& id) {
  for (std::string_view marker : {std::string_view("::"), std::string_view("/vgpu")}) {
    const auto at = id.find(marker);
    if (at == std::string_view::npos) continue;
    std::string replica(id.substr(at + marker.size()));
    id = id.substr(0, at);
    return replica;
  }
  return "";
}

bool Matches(const DeviceRef& ref, const GpuInfo& gpu) {
  if (!ref.mig_uuid.empty()) return gpu.is_mig() && gpu.mig_uuid == ref.mig_uuid;
  if (ref.gpu_instance.has_value() != gpu.is_mig()) return false;
  if (ref.gpu_instance && *ref.gpu_instance != *gpu.gpu_instance_id) return false;
  if (!ref.gpu_uuid.empty()) return gpu.uuid == ref.gpu_uuid;
  return ref.minor && gpu.minor_number == *ref.minor;
}

}  // namespace

std::optional<DeviceRef> ParseDeviceId(std::string_view id) {
  DeviceRef ref;
  ref.replica = TakeReplica(id);
  if (id.starts_with("MIG-GPU-")) {  // "MIG-GPU-<uuid>/<gi>/<ci>"
    id.remove_prefix(4);
    const auto slash = id.find('/');
    const auto slash2 = slash == std::string_view::npos ? slash : id.find('/', slash + 1);
    unsigned gi = 0;
    if (slash2 == std::string_view::npos ||
        !ParseUnsigned(id.substr(slash + 1, slash2 - slash - 1), gi)) {
      return std::nullopt;
    }
    ref.gpu_uuid = id.substr(0, slash);
    ref.gpu_instance = gi;
  } else if (id.starts_with("MIG-")) {
    ref.mig_uuid = id;
  } else if (id.starts_with("GPU-")) {
    ref.gpu_uuid = id;
  } else if (id.starts_with("nvidia")) {  // "nvidia<minor>[/gi<gi>]"
    id.remove_prefix(6);
    const auto slash = id.find("/gi");
    unsigned minor = 0, gi = 0;
    if (!ParseUnsigned(id.substr(0, slash), minor)) return std::nullopt;
    ref.minor = minor;
    if (slash != std::string_view::npos) {
      if (!ParseUnsigned(id.substr(slash + 3), gi)) return std::nullopt;
      ref.gpu_instance = gi;
    }
  } else {
    return std::nullopt;
  }
  return ref;
}

bool IsGpuResource(std::string_view resource, std::span<const std::string> extra) {
  return resource == "nvidia.com/gpu" || resource.starts_with("nvidia.com/mig-") ||
         resource == kNvidiaDraDriver ||
         std::find(extra.begin(), extra.end(), resource) != extra.end();
}

std::vector<std::vector<PodRef>> BuildPodMap(std::span<const PodDevice> granted,
                                             std::span<const GpuInfo> devices, size_t* unmatched) {
  std::vector<std::vector<PodRef>> pods(devices.size());
  for (const PodDevice& grant : granted) {
    const std::optional<DeviceRef> ref = ParseDeviceId(grant.device_id);
    bool found = false;
    for (size_t i = 0; ref && i < devices.size(); ++i) {
      if (!Matches(*ref, devices[i])) continue;
      pods[i].push_back({grant.namespace_name, grant.pod, grant.container});
      found = true;
    }
    if (!found && unmatched) ++*unmatched;
  }
  for (auto& holders : pods) {
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  }
  return pods;
}

}  // namespace gpuscope::attribution
