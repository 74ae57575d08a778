// Exported entry points: init/shutdown, system queries, enumeration, error
// strings, and the simulator's own extension functions.
#include <strings.h>

#include <cstring>

#include "exports_common.h"
#include "lifecycle.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

const char* ErrorSentence(nvmlReturn_t r) {
  switch (r) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 11:
      return "Interrupt request issue";
    case 12:
      return "NVML Shared Library Not Found";
    case 13:
      return "Function Not Found";
    case 14:
      return "Corrupted infoROM";
    case 15:
      return "GPU is lost";
    case 16:
      return "GPU requires restart";
    case 17:
      return "The operating system has blocked the request";
    case 18:
      return "RM has detected an NVML/RM version mismatch";
    case 19:
      return "In use by another client";
    case 20:
      return "Insufficient Memory";
    case 21:
      return "No data";
    case 22:
      return "The requested vgpu operation is not available on target device, because ECC "
             "is enabled";
    case 23:
      return "Insufficient resources";
    case 24:
      return "Frequency not supported";
    case 25:
      return "Argument version mismatch";
    case 26:
      return "Deprecated";
    case 27:
      return "Not ready";
    case 28:
      return "GPU not found";
    case 29:
      return "Invalid state";
    case 30:
      return "Reset type not supported";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t HandleByIndex(unsigned index, nvmlDevice_t* device) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlDeviceGetHandleByIndex_v2, &sim)) return r;
  if (!device || index >= sim->gpu_count()) return rc::kInvalidArgument;
  CountGpuCall(index);
  *device = DeviceHandle(index);
  // A lost GPU keeps its index; the handle is still written so a caller can
  // watch it come back.
  return sim->Lost(index, sim->Now()) ? rc::kGpuIsLost : rc::kSuccess;
}

nvmlReturn_t DeviceCount(unsigned* count) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlDeviceGetCount_v2, &sim)) return r;
  if (!count) return rc::kInvalidArgument;
  *count = sim->gpu_count();
  return rc::kSuccess;
}

nvmlReturn_t CudaVersion(int* version) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlSystemGetCudaDriverVersion_v2, &sim)) return r;
  if (!version) return rc::kInvalidArgument;
  *version = sim->scenario().cuda_version;
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  CountCall(kFn_nvmlInit_v2);
  return Init(0);
}

SIM_EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

SIM_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  CountCall(kFn_nvmlInitWithFlags);
  return Init(flags);
}

SIM_EXPORT nvmlReturn_t nvmlShutdown(void) {
  CountCall(kFn_nvmlShutdown);
  return Shutdown();
}

SIM_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  CountCall(kFn_nvmlErrorString);
  return ErrorSentence(result);
}

SIM_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int len) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlSystemGetDriverVersion, &sim)) return r;
  return CopyString(sim->scenario().driver_version, version, len);
}

SIM_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int len) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlSystemGetNVMLVersion, &sim)) return r;
  return CopyString(sim->scenario().nvml_version, version, len);
}

SIM_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return CudaVersion(version);
}

SIM_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return CudaVersion(version);
}

SIM_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int len) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlSystemGetProcessName, &sim)) return r;
  if (!name || len == 0) return rc::kInvalidArgument;
  for (unsigned g = 0; g < sim->gpu_count(); ++g) {
    for (const ProcessSpec& p : sim->Processes(g)) {
      if (p.pid != pid) continue;
      // Truncates like the driver does.
      std::strncpy(name, p.name.c_str(), len - 1);
      name[len - 1] = '\0';
      return rc::kSuccess;
    }
  }
  return rc::kNotFound;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return DeviceCount(count); }
SIM_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return DeviceCount(count); }

SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex(index, device);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex(index, device);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlDeviceGetHandleByUUID, &sim)) return r;
  if (!uuid || !device) return rc::kInvalidArgument;
  std::string want = uuid;
  for (unsigned g = 0; g < sim->gpu_count(); ++g) {
    const std::string& id = sim->identity(g).uuid;
    int found = want == id ? -1 : -2;
    const GpuSpec& spec = sim->spec(g);
    for (unsigned m = 0; found == -2 && spec.mig_enabled && m < spec.mig_instances.size(); ++m) {
      if (want == MigUuid(id, spec.mig_instances[m].gpu_instance_id)) found = static_cast<int>(m);
    }
    if (found == -2) continue;
    *device = DeviceHandle(g, found);
    return sim->Lost(g, sim->Now()) ? rc::kGpuIsLost : rc::kSuccess;
  }
  return rc::kNotFound;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlDeviceGetHandleByPciBusId_v2, &sim)) return r;
  if (!bus_id || !device) return rc::kInvalidArgument;
  for (unsigned g = 0; g < sim->gpu_count(); ++g) {
    const Identity& id = sim->identity(g);
    if (strcasecmp(bus_id, id.bus_id.c_str()) != 0 &&
        strcasecmp(bus_id, id.bus_id_legacy.c_str()) != 0) {
      continue;
    }
    *device = DeviceHandle(g);
    return sim->Lost(g, sim->Now()) ? rc::kGpuIsLost : rc::kSuccess;
  }
  return rc::kNotFound;
}

// Extension functions (not NVML): see sim/README.md.
SIM_EXPORT const char* gpuscopeSimLastError(void) { return LastError(); }
SIM_EXPORT void gpuscopeSimSetTime(double scenario_seconds) { SetTime(scenario_seconds); }
SIM_EXPORT double gpuscopeSimGetTime(void) { return GetTime(); }
