// Call accounting: one id per exported NVML function (from the X-macro in
// nvml/abi.h), and lock-free counters per function and per GPU for the
// control channel's `stats` command.
//
// Thread safety: all functions are safe from any thread (atomics).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nvml/abi.h"

namespace gpuscope::sim {

enum Fn : int {
#define GPUSCOPE_SIM_FN_ID(name, need, params) kFn_##name,
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_FN_ID)
#undef GPUSCOPE_SIM_FN_ID
      kFn_nvmlErrorString,
  kFn_nvmlDeviceGetHandleByPciBusId_v2,
  kFn_nvmlDeviceGetGpuFabricInfo,
  kFnCount,
};

constexpr unsigned kMaxGpus = 64;

const char* FnName(Fn fn);
// The id of an exported name, or -1.
int FnByName(std::string_view name);

void CountCall(Fn fn);
void CountGpuCall(unsigned gpu);
void ResetCallCounts();
// {"total":N,"functions":{"name":n,...},"gpus":[n0,n1,...]} for gpu_count GPUs;
// functions never called are left out.
std::string CallStatsJson(unsigned gpu_count);

}  // namespace gpuscope::sim
