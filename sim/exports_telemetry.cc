// Exported entry points: utilization, memory, thermals, power, clocks, PCIe.
#include <algorithm>
#include <cmath>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

unsigned Percent(double fraction) {
  return static_cast<unsigned>(std::lround(std::clamp(fraction, 0.0, 1.0) * 100));
}

unsigned Milliwatts(double watts) { return static_cast<unsigned>(std::lround(watts * 1000)); }

struct MemoryFigures {
  unsigned long long total, reserved, used;  // bytes; used excludes reserved
};

MemoryFigures Memory(const DeviceCall& c) {
  if (const MigInstanceSpec* m = c.mig_instance()) {
    auto total = static_cast<unsigned long long>(m->profile->memory_mib * kMiB);
    double used = ProcessMemoryAt(c.sim->Processes(c.gpu), c.now, c.mig);
    return {total, 0, std::min(total, static_cast<unsigned long long>(used))};
  }
  const Preset& p = c.preset();
  return {static_cast<unsigned long long>(p.memory_total_mib * kMiB),
          static_cast<unsigned long long>(p.memory_reserved_mib * kMiB),
          static_cast<unsigned long long>(c.st.memory_used)};
}

unsigned VideoClock(unsigned sm_clock) { return sm_clock * 9 / 10; }

nvmlReturn_t Reasons(Fn fn, nvmlDevice_t d, unsigned long long* reasons) {
  DeviceCall c;
  if (nvmlReturn_t r = BeginDeviceCall(fn, d, &c, MigHandles::kRefuse)) return r;
  if (!reasons) return rc::kInvalidArgument;
  *reasons = c.st.reasons;
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* util) {
  SIM_DEVICE_CALL(nvmlDeviceGetUtilizationRates, d);
  if (!util) return rc::kInvalidArgument;
  // With MIG on, the driver has no whole-GPU figure (per-instance GPM has).
  if (c.spec().mig_enabled) return rc::kNotSupported;
  util->gpu = Percent(c.st.util_avg);  // averaged over the sample period
  util->memory = Percent(c.st.dram_avg);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* mem) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetMemoryInfo, d);
  if (!mem) return rc::kInvalidArgument;
  MemoryFigures m = Memory(c);
  mem->total = m.total;
  mem->used = m.used + m.reserved;  // v1 counts the reserved part as used
  mem->free = m.total - mem->used;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* mem) {
  SIM_DEVICE_CALL_MIG(nvmlDeviceGetMemoryInfo_v2, d);
  if (!mem) return rc::kInvalidArgument;
  if (mem->version != gpuscope::nvml::kMemoryV2Version) return rc::kArgumentVersionMismatch;
  MemoryFigures m = Memory(c);
  mem->total = m.total;
  mem->reserved = m.reserved;
  mem->used = m.used;
  mem->free = m.total - m.reserved - m.used;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int* util,
                                                        unsigned int* periodUs) {
  SIM_DEVICE_CALL(nvmlDeviceGetEncoderUtilization, d);
  if (!util || !periodUs) return rc::kInvalidArgument;
  *util = 0;
  *periodUs = 167000;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int* util,
                                                        unsigned int* periodUs) {
  SIM_DEVICE_CALL(nvmlDeviceGetDecoderUtilization, d);
  if (!util || !periodUs) return rc::kInvalidArgument;
  *util = 0;
  *periodUs = 167000;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
                                                 unsigned int* celsius) {
  SIM_DEVICE_CALL(nvmlDeviceGetTemperature, d);
  if (!celsius || sensor != 0) return rc::kInvalidArgument;
  *celsius = static_cast<unsigned>(std::lround(std::max(0.0, c.st.temp_c)));
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int threshold,
                                                          unsigned int* celsius) {
  SIM_DEVICE_CALL(nvmlDeviceGetTemperatureThreshold, d);
  if (!celsius) return rc::kInvalidArgument;
  const Preset& p = c.preset();
  unsigned v = 0;
  switch (threshold) {
    case 0:
      v = p.temp_shutdown;
      break;
    case 1:
      v = p.temp_slowdown;
      break;
    case 2:
      v = p.temp_mem_max;
      break;
    case 3:
      v = p.temp_gpu_max;
      break;
    default:
      return rc::kNotSupported;
  }
  if (v == 0) return rc::kNotSupported;
  *celsius = v;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  SIM_DEVICE_CALL(nvmlDeviceGetPowerUsage, d);
  if (!mw) return rc::kInvalidArgument;
  *mw = Milliwatts(c.st.PowerAverageW());
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                                            unsigned long long* mj) {
  SIM_DEVICE_CALL(nvmlDeviceGetTotalEnergyConsumption, d);
  if (!mj) return rc::kInvalidArgument;
  *mj = static_cast<unsigned long long>(c.st.energy_mj);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  SIM_DEVICE_CALL(nvmlDeviceGetEnforcedPowerLimit, d);
  if (!mw) return rc::kInvalidArgument;
  *mw = Milliwatts(c.st.limit_w);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int* mw) {
  SIM_DEVICE_CALL(nvmlDeviceGetPowerManagementLimit, d);
  if (!mw) return rc::kInvalidArgument;
  double w = c.spec().power_limit_w > 0 ? c.spec().power_limit_w : c.preset().power_default_w;
  *mw = Milliwatts(w);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int* mw) {
  SIM_DEVICE_CALL(nvmlDeviceGetPowerManagementDefaultLimit, d);
  if (!mw) return rc::kInvalidArgument;
  *mw = Milliwatts(c.preset().power_default_w);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d,
                                                                     unsigned int* min_mw,
                                                                     unsigned int* max_mw) {
  SIM_DEVICE_CALL(nvmlDeviceGetPowerManagementLimitConstraints, d);
  if (!min_mw || !max_mw) return rc::kInvalidArgument;
  *min_mw = Milliwatts(c.preset().power_min_w);
  *max_mw = Milliwatts(c.preset().power_max_w);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  SIM_DEVICE_CALL(nvmlDeviceGetClockInfo, d);
  if (!mhz) return rc::kInvalidArgument;
  switch (type) {
    case 0:
    case 1:
      *mhz = c.st.sm_clock;
      return rc::kSuccess;
    case 2:
      *mhz = c.st.mem_clock;
      return rc::kSuccess;
    case 3:
      *mhz = VideoClock(c.st.sm_clock);
      return rc::kSuccess;
    default:
      return rc::kInvalidArgument;
  }
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  SIM_DEVICE_CALL(nvmlDeviceGetMaxClockInfo, d);
  if (!mhz) return rc::kInvalidArgument;
  switch (type) {
    case 0:
    case 1:
      *mhz = c.preset().max_sm_clock;
      return rc::kSuccess;
    case 2:
      *mhz = c.preset().max_mem_clock;
      return rc::kSuccess;
    case 3:
      *mhz = VideoClock(c.preset().max_sm_clock);
      return rc::kSuccess;
    default:
      return rc::kInvalidArgument;
  }
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                               unsigned long long* reasons) {
  return Reasons(kFn_nvmlDeviceGetCurrentClocksEventReasons, d, reasons);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                                  unsigned long long* reasons) {
  return Reasons(kFn_nvmlDeviceGetCurrentClocksThrottleReasons, d, reasons);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t d,
                                                                    unsigned long long* reasons) {
  SIM_DEVICE_CALL(nvmlDeviceGetSupportedClocksThrottleReasons, d);
  if (!reasons) return rc::kInvalidArgument;
  *reasons = 0x1FF;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int* percent) {
  SIM_DEVICE_CALL(nvmlDeviceGetFanSpeed, d);
  if (!percent) return rc::kInvalidArgument;
  return rc::kNotSupported;  // every preset is passively cooled
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int* pstate) {
  SIM_DEVICE_CALL(nvmlDeviceGetPerformanceState, d);
  if (!pstate) return rc::kInvalidArgument;
  *pstate = c.st.pstate;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter,
                                                    unsigned int* kb_per_sec) {
  SIM_DEVICE_CALL(nvmlDeviceGetPcieThroughput, d);
  if (!kb_per_sec || (counter != 0 && counter != 1)) return rc::kInvalidArgument;
  double bytes = counter == 0 ? c.st.act.pcie_tx : c.st.act.pcie_rx;
  *kb_per_sec = static_cast<unsigned>(bytes / 1024);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int* value) {
  SIM_DEVICE_CALL(nvmlDeviceGetPcieReplayCounter, d);
  if (!value) return rc::kInvalidArgument;
  *value = static_cast<unsigned>(c.st.pcie_replays);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  SIM_DEVICE_CALL(nvmlDeviceGetCurrPcieLinkGeneration, d);
  if (!gen) return rc::kInvalidArgument;
  *gen = c.st.pcie_gen;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  SIM_DEVICE_CALL(nvmlDeviceGetCurrPcieLinkWidth, d);
  if (!width) return rc::kInvalidArgument;
  *width = c.st.pcie_width;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  SIM_DEVICE_CALL(nvmlDeviceGetMaxPcieLinkGeneration, d);
  if (!gen) return rc::kInvalidArgument;
  *gen = c.preset().pcie_gen;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  SIM_DEVICE_CALL(nvmlDeviceGetMaxPcieLinkWidth, d);
  if (!width) return rc::kInvalidArgument;
  *width = c.preset().pcie_width;
  return rc::kSuccess;
}
