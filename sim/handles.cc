#include "handles.h"

#include <array>

namespace gpuscope::sim {
namespace {

constexpr unsigned kPerGpu = kMaxMig + 1;

std::array<nvmlDevice_st, kMaxGpus * kPerGpu> MakeTable() {
  std::array<nvmlDevice_st, kMaxGpus * kPerGpu> t{};
  for (unsigned i = 0; i < t.size(); ++i) {
    t[i].gpu = i / kPerGpu;
    t[i].mig = static_cast<int>(i % kPerGpu) - 1;
  }
  return t;
}

std::array<nvmlDevice_st, kMaxGpus* kPerGpu> g_handles = MakeTable();

}  // namespace

nvmlDevice_t DeviceHandle(unsigned gpu, int mig) { return &g_handles[gpu * kPerGpu + mig + 1]; }

bool DecodeHandle(nvmlDevice_t d, unsigned* gpu, int* mig) {
  auto addr = reinterpret_cast<uintptr_t>(d);
  auto begin = reinterpret_cast<uintptr_t>(g_handles.data());
  auto end = reinterpret_cast<uintptr_t>(g_handles.data() + g_handles.size());
  if (addr < begin || addr >= end || (addr - begin) % sizeof(nvmlDevice_st) != 0) return false;
  *gpu = d->gpu;
  *mig = d->mig;
  return true;
}

}  // namespace gpuscope::sim
