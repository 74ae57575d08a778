#include "calls.h"

#include <array>
#include <atomic>

namespace gpuscope::sim {
namespace {

constexpr const char* kFnNames[] = {
#define GPUSCOPE_SIM_FN_NAME(name, need, params) #name,
    GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_FN_NAME)
#undef GPUSCOPE_SIM_FN_NAME
        "nvmlErrorString",
    "nvmlDeviceGetHandleByPciBusId_v2",
    "nvmlDeviceGetGpuFabricInfo",
};
static_assert(sizeof(kFnNames) / sizeof(kFnNames[0]) == kFnCount);

std::array<std::atomic<uint64_t>, kFnCount> g_fn_calls{};
std::array<std::atomic<uint64_t>, kMaxGpus> g_gpu_calls{};

}  // namespace

const char* FnName(Fn fn) { return fn >= 0 && fn < kFnCount ? kFnNames[fn] : "?"; }

int FnByName(std::string_view name) {
  for (int i = 0; i < kFnCount; ++i) {
    if (name == kFnNames[i]) return i;
  }
  return -1;
}

void CountCall(Fn fn) { g_fn_calls[fn].fetch_add(1, std::memory_order_relaxed); }

void CountGpuCall(unsigned gpu) {
  if (gpu < kMaxGpus) g_gpu_calls[gpu].fetch_add(1, std::memory_order_relaxed);
}

void ResetCallCounts() {
  for (auto& c : g_fn_calls) c.store(0);
  for (auto& c : g_gpu_calls) c.store(0);
}

std::string CallStatsJson(unsigned gpu_count) {
  uint64_t total = 0;
  std::string fns;
  for (int i = 0; i < kFnCount; ++i) {
    uint64_t n = g_fn_calls[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    total += n;
    // Appended piece by piece: GCC 12 at -O3 misreads `string + literal`
    // chains as overlapping copies (-Wrestrict).
    if (!fns.empty()) fns += ',';
    fns.append("\"").append(kFnNames[i]).append("\":").append(std::to_string(n));
  }
  std::string gpus;
  for (unsigned g = 0; g < gpu_count && g < kMaxGpus; ++g) {
    if (g) gpus += ',';
    gpus += std::to_string(g_gpu_calls[g].load(std::memory_order_relaxed));
  }
  return "{\"total\":" + std::to_string(total) + ",\"functions\":{" + fns + "},\"gpus\":[" + gpus +
         "]}\n";
}

}  // namespace gpuscope::sim
