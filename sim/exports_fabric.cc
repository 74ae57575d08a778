// Exported entry points: GPU fabric (NVLink domain) registration and health.
// Only presets with `fabric` answer; the others say NOT_SUPPORTED, as a driver
// does on a board outside an NVLink fabric.
#include <cstring>

#include "exports_common.h"
#include "fabric.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

FabricReport Report(const DeviceCall& c) {
  return FabricAt(c.sim->scenario().seed, c.sim->Faults(c.gpu), c.now);
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* info) {
  SIM_DEVICE_CALL(nvmlDeviceGetGpuFabricInfo, d);
  if (!info) return rc::kInvalidArgument;
  if (!c.preset().fabric) return rc::kNotSupported;
  FabricReport r = Report(c);
  std::memcpy(info->clusterUuid, r.cluster_uuid.data(), sizeof(info->clusterUuid));
  info->status = static_cast<nvmlReturn_t>(r.status);
  info->cliqueId = r.clique_id;
  info->state = static_cast<nvmlGpuFabricState_t>(r.state);
  return rc::kSuccess;
}

// v2 and v3 share their first 36 bytes; v3 adds the health summary.
SIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v2_t* info) {
  SIM_DEVICE_CALL(nvmlDeviceGetGpuFabricInfoV, d);
  if (!info) return rc::kInvalidArgument;
  if (info->version != gpuscope::nvml::kGpuFabricInfoV2Version &&
      info->version != gpuscope::nvml::kGpuFabricInfoV3Version) {
    return rc::kArgumentVersionMismatch;
  }
  if (!c.preset().fabric) return rc::kNotSupported;
  FabricReport r = Report(c);
  std::memcpy(info->clusterUuid, r.cluster_uuid.data(), sizeof(info->clusterUuid));
  info->status = static_cast<nvmlReturn_t>(r.status);
  info->cliqueId = r.clique_id;
  info->state = static_cast<nvmlGpuFabricState_t>(r.state);
  info->healthMask = r.health_mask;
  if (info->version == gpuscope::nvml::kGpuFabricInfoV3Version) {
    reinterpret_cast<nvmlGpuFabricInfo_v3_t*>(info)->healthSummary =
        static_cast<unsigned char>(r.health_summary);
  }
  return rc::kSuccess;
}
