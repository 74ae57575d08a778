// Exported entry points of vGPU: on a host (a `vgpu` GPU) the board's virtual
// GPUs, each a VM's, time-sliced by the vGPU scheduler; in a guest (a
// `vgpu_guest` GPU) the virtual GPU's licence. Instance ids are global
// numbers, as NVML's are (not handles).
#include <cmath>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "exports_common.h"
#include "vgpu_scheduler.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

namespace abi = gpuscope::nvml;

// NVML's instance ids are large numbers; these mimic that, 64 slots per GPU.
constexpr unsigned kVgpuIdBase = 3251634176u;
constexpr unsigned kSlotsPerGpu = 64;
// NVIDIA's vGPU licensing: an unlicensed vGPU keeps full capability for 20
// minutes, then runs restricted.
constexpr double kLicenseGraceS = 20 * 60;

nvmlVgpuInstance_t InstanceId(unsigned gpu, unsigned slot) {
  return kVgpuIdBase + gpu * kSlotsPerGpu + slot;
}

struct InstanceCall {
  std::shared_ptr<Sim> sim;
  unsigned gpu = 0, slot = 0;
  double now = 0;
  const VgpuHostSpec& host() const { return *sim->spec(gpu).vgpu_host; }
  const VgpuInstanceSpec& inst() const { return host().instances[slot]; }
};

// Counts the call and finds the instance: NOT_FOUND for an id no live
// instance has, GPU_IS_LOST when its board is gone.
nvmlReturn_t BeginInstanceCall(Fn fn, nvmlVgpuInstance_t id, InstanceCall* c) {
  if (nvmlReturn_t r = BeginCall(fn, &c->sim)) return r;
  if (id == 0) return rc::kInvalidArgument;
  if (id < kVgpuIdBase) return rc::kNotFound;
  c->gpu = (id - kVgpuIdBase) / kSlotsPerGpu;
  c->slot = (id - kVgpuIdBase) % kSlotsPerGpu;
  if (c->gpu >= c->sim->gpu_count()) return rc::kNotFound;
  const GpuSpec& spec = c->sim->spec(c->gpu);
  if (!spec.vgpu_host || c->slot >= spec.vgpu_host->instances.size()) return rc::kNotFound;
  c->now = c->sim->Now();
  if (c->sim->Lost(c->gpu, c->now)) return rc::kGpuIsLost;
  return rc::kSuccess;
}

#define SIM_INSTANCE_CALL(fn, id) \
  InstanceCall c;                 \
  if (nvmlReturn_t rc_ = BeginInstanceCall(::gpuscope::sim::kFn_##fn, id, &c)) return rc_

// Every vGPU type name of the scenario, in order of first use: a type's id is
// its position plus one.
nvmlVgpuTypeId_t TypeId(const Sim& sim, const std::string& name) {
  std::vector<std::string> names;
  for (unsigned g = 0; g < sim.gpu_count(); ++g) {
    if (!sim.spec(g).vgpu_host) continue;
    for (const VgpuInstanceSpec& v : sim.spec(g).vgpu_host->instances) {
      bool seen = false;
      for (const std::string& n : names) seen |= n == v.type;
      if (!seen) names.push_back(v.type);
    }
  }
  for (unsigned i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i + 1;
  }
  return 0;
}

const VgpuInstanceSpec* TypeById(const Sim& sim, nvmlVgpuTypeId_t id) {
  for (unsigned g = 0; g < sim.gpu_count(); ++g) {
    if (!sim.spec(g).vgpu_host) continue;
    for (const VgpuInstanceSpec& v : sim.spec(g).vgpu_host->instances) {
      if (TypeId(sim, v.type) == id) return &v;
    }
  }
  return nullptr;
}

unsigned Percent(double fraction) { return static_cast<unsigned>(std::lround(fraction * 100)); }

// The licence at scenario time `now` of a licence that lapses at `expires_at`.
unsigned LicenseState(double now, double expires_at) {
  if (now < expires_at) return abi::kLicenseStateLicensed;
  if (now < expires_at + kLicenseGraceS) return abi::kLicenseStateUnlicensedUnrestricted;
  return abi::kLicenseStateUnlicensedRestricted;
}

nvmlGridLicenseExpiry_t Expiry(const Sim& sim, double expires_at) {
  nvmlGridLicenseExpiry_t e{};
  if (!std::isfinite(expires_at)) {
    e.status = abi::kLicenseExpiryPermanent;
    return e;
  }
  const auto t = static_cast<time_t>(sim.epoch_us() / 1000000 + static_cast<long long>(expires_at));
  struct tm tm {};
  gmtime_r(&t, &tm);
  e.year = static_cast<unsigned>(tm.tm_year + 1900);
  e.month = static_cast<unsigned short>(tm.tm_mon + 1);
  e.day = static_cast<unsigned short>(tm.tm_mday);
  e.hour = static_cast<unsigned short>(tm.tm_hour);
  e.min = static_cast<unsigned short>(tm.tm_min);
  e.sec = static_cast<unsigned short>(tm.tm_sec);
  e.status = abi::kLicenseExpiryValid;
  return e;
}

// The host's instances alive on this board, or NOT_SUPPORTED on other boards.
nvmlReturn_t HostOf(const DeviceCall& c, const VgpuHostSpec** host) {
  if (!c.spec().vgpu_host) return rc::kNotSupported;
  *host = &*c.spec().vgpu_host;
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetHostVgpuMode(nvmlDevice_t d, int* mode) {
  SIM_DEVICE_CALL(nvmlDeviceGetHostVgpuMode, d);
  if (!mode) return rc::kInvalidArgument;
  const VgpuHostSpec* host = nullptr;
  if (nvmlReturn_t r = HostOf(c, &host)) return r;
  *mode = host->sriov ? abi::kHostVgpuSriov : abi::kHostVgpuNonSriov;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetActiveVgpus(nvmlDevice_t d, unsigned int* count,
                                                 nvmlVgpuInstance_t* instances) {
  SIM_DEVICE_CALL(nvmlDeviceGetActiveVgpus, d);
  if (!count) return rc::kInvalidArgument;
  const VgpuHostSpec* host = nullptr;
  if (nvmlReturn_t r = HostOf(c, &host)) return r;
  const auto n = static_cast<unsigned>(host->instances.size());
  if (*count < n || (n > 0 && !instances)) {
    *count = n;
    return rc::kInsufficientSize;
  }
  *count = n;
  for (unsigned i = 0; i < n; ++i) instances[i] = InstanceId(c.gpu, i);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetVgpuSchedulerState(nvmlDevice_t d,
                                                        nvmlVgpuSchedulerGetState_t* state) {
  SIM_DEVICE_CALL(nvmlDeviceGetVgpuSchedulerState, d);
  if (!state) return rc::kInvalidArgument;
  const VgpuHostSpec* host = nullptr;
  if (nvmlReturn_t r = HostOf(c, &host)) return r;
  *state = {};
  state->schedulerPolicy = static_cast<unsigned>(host->scheduler);
  state->arrMode = 1;  // adaptive round-robin disabled
  state->schedulerParams.vgpuSchedData.timeslice = host->timeslice_us * 1000;  // NVML: ns
  return rc::kSuccess;
}

// One sample per instance with its granted share of the board's SMs; a NULL
// array asks for the count.
SIM_EXPORT nvmlReturn_t nvmlDeviceGetVgpuUtilization(nvmlDevice_t d,
                                                     unsigned long long last_seen_us,
                                                     int* value_type, unsigned int* count,
                                                     nvmlVgpuInstanceUtilizationSample_t* samples) {
  SIM_DEVICE_CALL(nvmlDeviceGetVgpuUtilization, d);
  if (!count || !value_type) return rc::kInvalidArgument;
  const VgpuHostSpec* host = nullptr;
  if (nvmlReturn_t r = HostOf(c, &host)) return r;
  const auto n = static_cast<unsigned>(host->instances.size());
  const unsigned long long ts = c.TimestampUs();
  if (ts <= last_seen_us) return rc::kNotFound;
  if (!samples) {
    *count = n;
    return rc::kSuccess;
  }
  if (*count < n) {
    *count = n;
    return rc::kInsufficientSize;
  }
  *value_type = abi::kValueUint;
  const std::vector<double> granted = VgpuGranted(*host);
  for (unsigned i = 0; i < n; ++i) {
    nvmlVgpuInstanceUtilizationSample_t& s = samples[i];
    s = {};
    s.vgpuInstance = InstanceId(c.gpu, i);
    s.timeStamp = ts;
    s.smUtil.uiVal = Percent(granted[i]);
    s.memUtil.uiVal = Percent(granted[i] * 0.6);  // memory-controller share of a kernel mix
    s.encUtil.uiVal = 0;
    s.decUtil.uiVal = 0;
  }
  *count = n;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetVgpuProcessUtilization(
    nvmlDevice_t d, unsigned long long last_seen_us, unsigned int* count,
    nvmlVgpuProcessUtilizationSample_t* samples) {
  SIM_DEVICE_CALL(nvmlDeviceGetVgpuProcessUtilization, d);
  if (!count) return rc::kInvalidArgument;
  const VgpuHostSpec* host = nullptr;
  if (nvmlReturn_t r = HostOf(c, &host)) return r;
  const std::vector<double> granted = VgpuGranted(*host);
  std::vector<unsigned> slots;
  for (unsigned i = 0; i < host->instances.size(); ++i) {
    if (host->instances[i].pid != 0) slots.push_back(i);
  }
  const auto n = static_cast<unsigned>(slots.size());
  const unsigned long long ts = c.TimestampUs();
  if (n == 0 || ts <= last_seen_us) return rc::kNotFound;
  if (!samples || *count < n) {
    *count = n;
    return rc::kInsufficientSize;
  }
  for (unsigned k = 0; k < n; ++k) {
    const VgpuInstanceSpec& v = host->instances[slots[k]];
    nvmlVgpuProcessUtilizationSample_t& s = samples[k];
    s = {};
    s.vgpuInstance = InstanceId(c.gpu, slots[k]);
    s.pid = v.pid;
    std::strncpy(s.processName, v.process_name.c_str(), sizeof s.processName - 1);
    s.timeStamp = ts;
    s.smUtil = Percent(granted[slots[k]]);
    s.memUtil = Percent(granted[slots[k]] * 0.6);
  }
  *count = n;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetVmID(nvmlVgpuInstance_t id, char* vm_id,
                                                unsigned int size, int* vm_id_type) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetVmID, id);
  if (!vm_id_type) return rc::kInvalidArgument;
  *vm_id_type = abi::kVgpuVmIdUuid;
  return CopyString(c.inst().vm_id, vm_id, size);
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetUUID(nvmlVgpuInstance_t id, char* uuid,
                                                unsigned int size) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetUUID, id);
  // Derived from the board's UUID and the slot: stable across runs.
  std::string board = c.sim->identity(c.gpu).uuid.substr(4);
  char tail[16];
  std::snprintf(tail, sizeof tail, "%012x", c.slot + 1);
  return CopyString(board.substr(0, 24) + tail, uuid, size);
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetType(nvmlVgpuInstance_t id, nvmlVgpuTypeId_t* type) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetType, id);
  if (!type) return rc::kInvalidArgument;
  *type = TypeId(*c.sim, c.inst().type);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlVgpuTypeGetName(nvmlVgpuTypeId_t type, char* name, unsigned int* size) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlVgpuTypeGetName, &sim)) return r;
  if (!size) return rc::kInvalidArgument;
  const VgpuInstanceSpec* v = TypeById(*sim, type);
  if (!v) return rc::kInvalidArgument;
  const std::string full = "GRID " + v->type;
  if (!name || *size < full.size() + 1) {
    *size = static_cast<unsigned>(full.size() + 1);
    return rc::kInsufficientSize;
  }
  *size = static_cast<unsigned>(full.size() + 1);
  return CopyString(full, name, static_cast<unsigned>(full.size() + 1));
}

SIM_EXPORT nvmlReturn_t nvmlVgpuTypeGetFramebufferSize(nvmlVgpuTypeId_t type,
                                                       unsigned long long* bytes) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlVgpuTypeGetFramebufferSize, &sim)) return r;
  if (!bytes) return rc::kInvalidArgument;
  const VgpuInstanceSpec* v = TypeById(*sim, type);
  if (!v) return rc::kInvalidArgument;
  *bytes = v->fb_bytes;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetFbUsage(nvmlVgpuInstance_t id,
                                                   unsigned long long* bytes) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetFbUsage, id);
  if (!bytes) return rc::kInvalidArgument;
  *bytes = static_cast<unsigned long long>(c.inst().memory_used_gib * 1073741824.0);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetLicenseInfo_v2(nvmlVgpuInstance_t id,
                                                          nvmlVgpuLicenseInfo_t* info) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetLicenseInfo_v2, id);
  if (!info) return rc::kInvalidArgument;
  *info = {};
  info->currentState = LicenseState(c.now, c.inst().license_expires_at);
  info->isLicensed = info->currentState == abi::kLicenseStateLicensed ? 1 : 0;
  info->licenseExpiry = Expiry(*c.sim, c.inst().license_expires_at);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlVgpuInstanceGetEncoderStats(nvmlVgpuInstance_t id,
                                                        unsigned int* sessions, unsigned int* fps,
                                                        unsigned int* latency_us) {
  SIM_INSTANCE_CALL(nvmlVgpuInstanceGetEncoderStats, id);
  if (!sessions || !fps || !latency_us) return rc::kInvalidArgument;
  *sessions = *fps = *latency_us = 0;  // compute VMs encode nothing
  return rc::kSuccess;
}

// In a guest: the vGPU's licensed feature (a C-series vGPU: Virtual Compute
// Server); featureState drops to 0 when the licence lapses.
SIM_EXPORT nvmlReturn_t
nvmlDeviceGetGridLicensableFeatures_v4(nvmlDevice_t d, nvmlGridLicensableFeatures_t* features) {
  SIM_DEVICE_CALL(nvmlDeviceGetGridLicensableFeatures_v4, d);
  if (!features) return rc::kInvalidArgument;
  if (!c.spec().vgpu_guest) return rc::kNotSupported;
  const double expires = c.spec().vgpu_guest->license_expires_at;
  *features = {};
  features->isGridLicenseSupported = 1;
  features->licensableFeaturesCount = 1;
  nvmlGridLicensableFeature_t& f = features->gridLicensableFeatures[0];
  f.featureCode = abi::kLicenseFeatureCompute;
  f.featureState = c.now < expires ? 1 : 0;
  std::strncpy(f.licenseInfo, "NVIDIA Virtual Compute Server", sizeof f.licenseInfo - 1);
  std::strncpy(f.productName, "NVIDIA Virtual Compute Server", sizeof f.productName - 1);
  f.featureEnabled = 1;
  f.licenseExpiry = Expiry(*c.sim, expires);
  return rc::kSuccess;
}
