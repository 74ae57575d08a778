// Exported entry points: MIG devices and running processes.
#include <cmath>
#include <cstring>
#include <vector>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

struct ProcessView {
  unsigned pid;
  unsigned long long used_bytes;
  unsigned gi, ci;
  double sm_share;
};

// Which of NVML's process lists to answer.
enum class ProcessList { kAny, kCompute, kGraphics, kMps };

bool OnList(const ProcessSpec& p, ProcessList list) {
  switch (list) {
    case ProcessList::kCompute:
      return p.compute;
    case ProcessList::kGraphics:
      return p.graphics;
    case ProcessList::kMps:
      return p.mps;
    case ProcessList::kAny:
      break;
  }
  return true;
}

// Processes of `list` alive at c.now on this device (a MIG device: only its own).
std::vector<ProcessView> Processes(const DeviceCall& c, ProcessList list) {
  std::vector<ProcessView> out;
  const GpuSpec& spec = c.spec();
  for (const ProcessSpec& p : c.sim->Processes(c.gpu)) {
    if (c.now < p.start || c.now >= p.end || !OnList(p, list)) continue;
    if (c.mig >= 0 && p.gpu_instance != c.mig) continue;
    ProcessView v{p.pid, static_cast<unsigned long long>(p.used_memory_gib * 1073741824.0),
                  0xFFFFFFFFu, 0xFFFFFFFFu, p.sm_share};
    if (p.gpu_instance >= 0 && spec.mig_enabled) {
      v.gi = spec.mig_instances[p.gpu_instance].gpu_instance_id;
      v.ci = 0;
    }
    out.push_back(v);
  }
  // A leak belongs to the first process of the whole GPU.
  if (!out.empty() && c.mig < 0)
    out[0].used_bytes += static_cast<unsigned long long>(c.st.leak_bytes);
  return out;
}

// The running-process ABI shared by the compute, graphics and MPS lists.
nvmlReturn_t RunningProcesses(const DeviceCall& c, ProcessList list, unsigned int* count,
                              nvmlProcessInfo_v2_t* infos) {
  if (!count) return rc::kInvalidArgument;
  std::vector<ProcessView> procs = Processes(c, list);
  auto n = static_cast<unsigned>(procs.size());
  if (*count < n) {
    *count = n;
    return rc::kInsufficientSize;
  }
  *count = n;
  if (n == 0) return rc::kSuccess;
  if (!infos) return rc::kInvalidArgument;
  // Early 535 drivers write 32-byte entries (an extra protected-memory field).
  bool early = IsEarly535(c.sim->scenario().driver_version);
  size_t stride = early ? 32 : sizeof(nvmlProcessInfo_v2_t);
  auto* base = reinterpret_cast<unsigned char*>(infos);
  for (unsigned i = 0; i < n; ++i) {
    nvmlProcessInfo_v2_t e{procs[i].pid, procs[i].used_bytes, procs[i].gi, procs[i].ci};
    std::memcpy(base + i * stride, &e, sizeof e);
    if (early) std::memset(base + i * stride + sizeof e, 0, stride - sizeof e);
  }
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                                nvmlProcessInfo_v2_t* infos) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetComputeRunningProcesses_v3, d);
  return RunningProcesses(c, ProcessList::kCompute, count, infos);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d,
                                                                 unsigned int* count,
                                                                 nvmlProcessInfo_v2_t* infos) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetGraphicsRunningProcesses_v3, d);
  return RunningProcesses(c, ProcessList::kGraphics, count, infos);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d,
                                                                   unsigned int* count,
                                                                   nvmlProcessInfo_v2_t* infos) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetMPSComputeRunningProcesses_v3, d);
  return RunningProcesses(c, ProcessList::kMps, count, infos);
}

// One sample per live process (of any list), each taking its sm_share of the
// GPU's kernel time (utilization.gpu: on real drivers the processes' smUtil add
// up to it) and DRAM activity; NVML answers only on whole GPUs.
SIM_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                                        nvmlProcessUtilizationSample_t* samples,
                                                        unsigned int* count,
                                                        unsigned long long last_seen_us) {
  SIM_DEVICE_CALL(nvmlDeviceGetProcessUtilization, d);
  if (!count) return rc::kInvalidArgument;
  if (c.spec().mig_enabled) return rc::kNotSupported;
  std::vector<ProcessView> procs = Processes(c, ProcessList::kAny);
  unsigned long long ts = c.TimestampUs();
  if (procs.empty() || ts <= last_seen_us) return rc::kNotFound;
  auto n = static_cast<unsigned>(procs.size());
  if (!samples || *count < n) {
    *count = n;
    return rc::kInsufficientSize;
  }
  double shares = 0;
  for (const ProcessView& p : procs) shares += p.sm_share;
  for (unsigned i = 0; i < n; ++i) {
    const double part = shares > 0 ? procs[i].sm_share / shares : 0;
    samples[i] = {procs[i].pid,
                  ts,
                  static_cast<unsigned>(std::lround(c.st.act.util * 100 * part)),
                  static_cast<unsigned>(std::lround(c.st.act.dram * 100 * part)),
                  0,
                  0};
  }
  *count = n;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current,
                                             unsigned int* pending) {
  SIM_DEVICE_CALL(nvmlDeviceGetMigMode, d);
  if (!current || !pending) return rc::kInvalidArgument;
  if (c.preset().mig_profiles.empty()) return rc::kNotSupported;
  *current = *pending = c.spec().mig_enabled ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  SIM_DEVICE_CALL(nvmlDeviceGetMaxMigDeviceCount, d);
  if (!count) return rc::kInvalidArgument;
  if (c.preset().mig_profiles.empty()) return rc::kNotSupported;
  *count = kMaxMig;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                            nvmlDevice_t* mig) {
  SIM_DEVICE_CALL(nvmlDeviceGetMigDeviceHandleByIndex, d);
  if (!mig) return rc::kInvalidArgument;
  if (c.preset().mig_profiles.empty()) return rc::kNotSupported;
  if (!c.spec().mig_enabled) return rc::kInvalidArgument;
  if (index >= kMaxMig) return rc::kInvalidArgument;
  if (index >= c.spec().mig_instances.size()) return rc::kNotFound;
  *mig = DeviceHandle(c.gpu, static_cast<int>(index));
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int* is) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceIsMigDeviceHandle, d);
  if (!is) return rc::kInvalidArgument;
  *is = c.mig >= 0 ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetGpuInstanceId, d);
  if (!id) return rc::kInvalidArgument;
  if (c.mig < 0) return rc::kNotSupported;
  *id = c.mig_instance()->gpu_instance_id;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetComputeInstanceId, d);
  if (!id) return rc::kInvalidArgument;
  if (c.mig < 0) return rc::kNotSupported;
  *id = 0;  // one compute instance spanning each GPU instance
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                     nvmlDevice_t* parent) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, mig);
  if (!parent) return rc::kInvalidArgument;
  if (c.mig < 0) return rc::kNotSupported;
  *parent = DeviceHandle(c.gpu);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t* attr) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetAttributes_v2, d);
  if (!attr) return rc::kInvalidArgument;
  const Preset& p = c.preset();
  const MigProfile* prof = c.mig >= 0 ? c.mig_instance()->profile : nullptr;
  unsigned slices = prof ? prof->slices : 7;
  *attr = {};
  attr->multiprocessorCount = prof ? prof->sm_count : p.sm_count;
  attr->sharedCopyEngineCount = slices;
  attr->sharedDecoderCount = slices >= 7 ? 7 : slices;
  attr->sharedEncoderCount = 0;
  attr->sharedJpegCount = slices >= 7 ? 7 : slices;
  attr->sharedOfaCount = slices >= 7 ? 1 : 0;
  attr->gpuInstanceSliceCount = slices;
  attr->computeInstanceSliceCount = slices;
  attr->memorySizeMB = prof ? prof->memory_mib : p.memory_total_mib;
  return rc::kSuccess;
}
