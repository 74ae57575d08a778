// Which Kubernetes pods hold which GPU or MIG instance, from the kubelet's
// pod-resources answer.
//
// Device ids in that answer come in the forms device plugins use:
//   "GPU-<uuid>"                 a whole GPU (NVIDIA device plugin, default)
//   "MIG-<uuid>"                 a MIG instance (driver R470 and newer)
//   "MIG-GPU-<uuid>/<gi>/<ci>"   a MIG instance (older drivers)
//   "nvidia<minor>"              a whole GPU by device name (GKE; dcgm-exporter's
//                                --kubernetes-gpu-id-type device-name)
//   "nvidia<minor>/gi<gi>"       a MIG instance by device name (GKE)
// each optionally followed by a sharing replica: "<id>::<n>" (NVIDIA
// time-slicing and MPS) or "<id>/vgpu<n>" (GKE). Every form is understood
// whatever --kubernetes-gpu-id-type says, so a mixed node still resolves.
//
// A GPU shared by several pods lists every one of them (sorted, unique).
// Thread safety: values; BuildPodMap is a pure function.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"

namespace gpuscope::attribution {

// NVIDIA's GPU DRA driver (k8s-dra-driver-gpu): GPUs and MIG devices.
inline constexpr std::string_view kNvidiaDraDriver = "gpu.nvidia.com";

// A device of a DRA ResourceClaim, as the kubelet lists it: driver, pool and
// device name together name one device of the node's ResourceSlices
// (resource_slices.h turns it into a device id).
struct DraDevice {
  std::string driver;  // "gpu.nvidia.com"
  std::string pool;    // the NVIDIA driver names its pool after the node
  std::string device;  // "gpu-0", "gpu-0-mig-...": not a UUID
  std::string claim_namespace, claim;
};

// One device id granted to one container, as the kubelet lists it.
struct PodDevice {
  std::string namespace_name, pod, container;
  std::string resource;          // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...; DRA: the driver
  std::string device_id;         // one of the forms above; DRA: empty until resolved
  std::optional<DraDevice> dra;  // set for a device of a DRA claim
};

struct PodRef {
  std::string namespace_name, pod, container;
  auto operator<=>(const PodRef&) const = default;
};

struct DeviceRef {
  std::string gpu_uuid;                  // "GPU-..." (a MIG's parent for the old form)
  std::string mig_uuid;                  // "MIG-..." (new form)
  std::optional<unsigned> minor;         // "nvidia<minor>"
  std::optional<unsigned> gpu_instance;  // old MIG form or "/gi<n>"
  std::string replica;                   // sharing replica, empty when exclusive
};

// Parses one device id; nullopt for a form none of the above.
std::optional<DeviceRef> ParseDeviceId(std::string_view id);

// True for "nvidia.com/gpu", "nvidia.com/mig-*", NVIDIA's DRA driver
// "gpu.nvidia.com" and any name in `extra`.
bool IsGpuResource(std::string_view resource, std::span<const std::string> extra = {});

// For each entry of `devices` (the inventory order: GPUs and their MIG
// instances), the pods that hold it. Device ids that match no device are
// counted in `unmatched` when it is not null.
std::vector<std::vector<PodRef>> BuildPodMap(std::span<const PodDevice> granted,
                                             std::span<const GpuInfo> devices,
                                             size_t* unmatched = nullptr);

}  // namespace gpuscope::attribution
