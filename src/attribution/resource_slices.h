// Which GPU a DRA device is. The kubelet names a container's DRA devices by
// driver, pool and device name ("gpu.nvidia.com", "node-1", "gpu-0"); the
// UUID that NVML knows is an attribute of that device in the node's
// ResourceSlices (resource.k8s.io), published by the driver. NVIDIA's driver
// publishes, per device, the attributes `type` ("gpu", "mig", "vfio"),
// `uuid` ("GPU-..." or "MIG-...") and, for MIG, `parentUUID`.
//
// ResourceSliceReader lists this node's slices through the in-cluster API
// client (baseline/kube_api.h): GET
// /apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName=NODE
// in pages, read-only, from the attribution thread (never on the scrape
// path), and keeps the result: it lists again when the copy is older than
// resync_s, or when the kubelet names a device the copy lacks (at most every
// retry_s). A cluster without resource.k8s.io/v1 (before 1.34) answers 404
// and v1beta2 (1.33), then v1beta1 (1.32) are asked.
//
// Without the API (no token, RBAC denied, the server down), DraDeviceId
// falls back to what NVIDIA's device name says: "gpu-<minor>" is the GPU of
// that /dev/nvidia minor (the driver's naming since 2025, its PR #428;
// earlier releases used the NVML index there). A MIG device's name does not
// say which instance it is: it stays unresolved (docs/attribution.md).
//
// What is trusted: only slices whose spec.nodeName is this node, only
// string `uuid` attributes of the form "GPU-..." or "MIG-..."; a UUID that
// no local GPU has matches nothing. Bounded: the HTTP module's 64 MiB per
// answer, max_devices over all pages, max_pages pages.
//
// Thread safety: ParseResourceSliceList and DraDeviceId are pure; a
// ResourceSliceReader is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/pod_map.h"
#include "baseline/kube_api.h"
#include "gpuscope/attribution.h"

namespace gpuscope::attribution {

// What a ResourceSlice says of one device.
struct DraDeviceFacts {
  std::string uuid;         // "GPU-..." or "MIG-..."; empty when not published
  std::string parent_uuid;  // a MIG device's GPU
  std::string type;         // "gpu", "mig", ...
  int64_t generation = 0;   // of its pool (spec.pool.generation)
  bool operator==(const DraDeviceFacts&) const = default;
};

// "driver/pool/device" -> its facts.
using SliceIndex = std::map<std::string, DraDeviceFacts>;
std::string SliceKey(std::string_view driver, std::string_view pool, std::string_view device);

// One page of a ResourceSliceList (any of v1, v1beta2, v1beta1).
struct SlicePage {
  std::string error;  // not empty: not a ResourceSliceList (nothing else is valid)
  SliceIndex devices;
  std::string next;  // metadata.continue; "" on the last page
};
// Devices of slices whose spec.nodeName is not `node` are left out.
SlicePage ParseResourceSliceList(std::string_view json, std::string_view node);
// Keeps of each pool only the devices of its highest generation: while a
// driver updates a pool, slices of the old generation may still be listed,
// and the API says to ignore them.
void KeepNewestGeneration(SliceIndex& index);

// The device id (pod_map.h's forms) a DRA device stands for: its slice's
// uuid when `slices` has it, else what its name says for NVIDIA's driver
// ("gpu-<minor>" -> "nvidia<minor>"); empty when neither tells.
std::string DraDeviceId(const DraDevice& device, const SliceIndex* slices);

struct ResourceSliceOptions {
  std::string node;  // this node's name; empty: $NODE_NAME (without one, nothing is listed)
  baseline::KubeApiOptions api;
  double resync_s = 300;  // list again after this long, even when every device is known
  double retry_s = 30;    // after a failure or for an unknown device, at most this often
  int page_size = 500;
  int max_pages = 100;
  size_t max_devices = 16384;
};

class ResourceSliceReader {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ResourceSliceReader(ResourceSliceOptions options);

  // The slices to resolve `wanted` with: listed again when due (above).
  // Null while no list ever succeeded; on a failed list the last good one
  // stays in use and state() is down.
  const SliceIndex* Lookup(std::span<const DraDevice* const> wanted, Clock::time_point now);

  // gpuscope_attribution_up{source="resourceslices"} and its reason.
  AttributionSource state() const;
  uint64_t failures() const { return failures_; }  // lists that failed so far
  uint64_t lists() const { return lists_; }        // lists tried so far

 private:
  Status List();  // all pages, into index_
  Result<std::string> Get(const std::string& path);

  ResourceSliceOptions options_;
  baseline::KubeApi api_;
  std::string version_ = "v1";  // the resource.k8s.io version the server serves
  bool have_index_ = false;
  SliceIndex index_;
  Clock::time_point listed_{};  // last try
  bool tried_ = false;
  std::string error_;  // of the last try; empty when it succeeded
  uint64_t failures_ = 0, lists_ = 0;
};

}  // namespace gpuscope::attribution
