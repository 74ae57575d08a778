// Device handles: nvmlDevice_t values are addresses in one static table, so
// they stay valid across nvmlShutdown/nvmlInit and can be validated by range.
//
// Thread safety: the table is immutable after static initialisation.
#pragma once

#include "calls.h"
#include "nvml/abi.h"

// NVML leaves this type opaque; the simulator defines it.
struct nvmlDevice_st {
  unsigned gpu;
  int mig;  // -1: the whole GPU, else the MIG device index
};

namespace gpuscope::sim {

constexpr unsigned kMaxMig = 7;

nvmlDevice_t DeviceHandle(unsigned gpu, int mig = -1);
// False when d is not one of the table's handles.
bool DecodeHandle(nvmlDevice_t d, unsigned* gpu, int* mig);

}  // namespace gpuscope::sim
