// Exported entry points: identity and modes of a device.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

SIM_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int* index) {
  SIM_DEVICE_CALL(nvmlDeviceGetIndex, d);
  if (!index) return rc::kInvalidArgument;
  *index = c.gpu;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int n) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetName, d);
  std::string s = c.preset().name;
  if (c.mig >= 0) s += std::string(" MIG ") + c.mig_instance()->profile->name;
  return CopyString(s, name, n);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int n) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetUUID, d);
  const std::string& id = c.sim->identity(c.gpu).uuid;
  return CopyString(c.mig >= 0 ? MigUuid(id, c.mig_instance()->gpu_instance_id) : id, uuid, n);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* s, unsigned int n) {
  SIM_DEVICE_CALL(nvmlDeviceGetSerial, d);
  return CopyString(c.sim->identity(c.gpu).serial, s, n);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char* v, unsigned int n) {
  SIM_DEVICE_CALL(nvmlDeviceGetVbiosVersion, d);
  return CopyString(c.preset().vbios, v, n);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  SIM_DEVICE_CALL(nvmlDeviceGetPciInfo_v3, d);
  if (!pci) return rc::kInvalidArgument;
  const Identity& id = c.sim->identity(c.gpu);
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", id.bus_id_legacy.c_str());
  std::snprintf(pci->busId, sizeof pci->busId, "%s", id.bus_id.c_str());
  pci->domain = id.domain;
  pci->bus = id.bus;
  pci->device = 0;
  pci->pciDeviceId = c.preset().pci_device_id;
  pci->pciSubSystemId = c.preset().pci_subsystem_id;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* minor) {
  SIM_DEVICE_CALL(nvmlDeviceGetMinorNumber, d);
  if (!minor) return rc::kInvalidArgument;
  *minor = c.sim->identity(c.gpu).minor;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned int* arch) {
  SIM_DEVICE_CALL(nvmlDeviceGetArchitecture, d);
  if (!arch) return rc::kInvalidArgument;
  *arch = c.preset().architecture;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, int* brand) {
  SIM_DEVICE_CALL(nvmlDeviceGetBrand, d);
  if (!brand) return rc::kInvalidArgument;
  *brand = c.preset().brand;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  SIM_DEVICE_CALL(nvmlDeviceGetCudaComputeCapability, d);
  if (!major || !minor) return rc::kInvalidArgument;
  *major = c.preset().cc_major;
  *minor = c.preset().cc_minor;
  return rc::kSuccess;
}

namespace {

// The fixed modes of a data-center board: persistence on, display off,
// compute default, power management on.
nvmlReturn_t Mode(Fn fn, nvmlDevice_t d, int* mode, int value) {
  DeviceCall c;
  if (nvmlReturn_t r = BeginDeviceCall(fn, d, &c, MigHandles::kRefuse)) return r;
  if (!mode) return rc::kInvalidArgument;
  *mode = value;
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* mode) {
  return Mode(kFn_nvmlDeviceGetPersistenceMode, d, mode, 1);
}
SIM_EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t d, int* mode) {
  return Mode(kFn_nvmlDeviceGetDisplayMode, d, mode, 0);
}
SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) {
  return Mode(kFn_nvmlDeviceGetComputeMode, d, mode, 0);
}
SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t d, int* mode) {
  return Mode(kFn_nvmlDeviceGetPowerManagementMode, d, mode, 1);
}
