// Exported entry points: board facts dcgm-exporter serves as fields (BAR1,
// virtualization mode, InfoROM).
#include <cstring>
#include <functional>
#include <string>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

constexpr unsigned long long kMiB = 1ull << 20;

// BAR1 spans the framebuffer rounded up to a power of two (128 GiB on an
// H100 80GB or A100 80GB, 32 GiB on an L4); the driver itself maps 1 MiB.
unsigned long long Bar1TotalMib(const DeviceCall& c) {
  unsigned long long mib = 1;
  while (mib < c.preset().memory_total_mib) mib <<= 1;
  return mib;
}

// InfoROM versions by architecture, as nvidia-smi -q shows them on such
// boards; the power object is absent on current data-center boards.
struct Inforom {
  const char* image;
  const char* oem;
  const char* ecc;
};
Inforom InforomOf(const DeviceCall& c) {
  switch (c.preset().architecture) {
    case 7:  // Ampere
      return {"G506.0212.00.02", "2.0", "6.16"};
    case 8:  // Ada
      return {"G193.0200.00.01", "2.1", "6.16"};
    case 10:  // Blackwell
      return {"G525.0200.00.03", "2.1", "7.16"};
    default:  // Hopper
      return {"G520.0200.00.05", "2.1", "7.16"};
  }
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, nvmlBAR1Memory_t* bar1) {
  SIM_DEVICE_CALL(nvmlDeviceGetBAR1MemoryInfo, d);
  if (!bar1) return rc::kInvalidArgument;
  bar1->bar1Total = Bar1TotalMib(c) * kMiB;
  bar1->bar1Used = kMiB;
  bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t d, int* mode) {
  SIM_DEVICE_CALL(nvmlDeviceGetVirtualizationMode, d);
  if (!mode) return rc::kInvalidArgument;
  // NVML_GPU_VIRTUALIZATION_MODE_*: 3 hosts vGPUs, 2 is a guest's vGPU, 0 bare metal.
  *mode = c.spec().vgpu_host ? 3 : c.spec().vgpu_guest ? 2 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t d, int object, char* version,
                                                    unsigned int length) {
  SIM_DEVICE_CALL(nvmlDeviceGetInforomVersion, d);
  const Inforom info = InforomOf(c);
  switch (object) {
    case 0:
      return CopyString(info.oem, version, length);
    case 1:
      return CopyString(info.ecc, version, length);
    case 2:
      return rc::kNotSupported;
    default:
      return rc::kInvalidArgument;
  }
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t d, char* version,
                                                         unsigned int length) {
  SIM_DEVICE_CALL(nvmlDeviceGetInforomImageVersion, d);
  return CopyString(InforomOf(c).image, version, length);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetInforomConfigurationChecksum(nvmlDevice_t d,
                                                                  unsigned int* checksum) {
  SIM_DEVICE_CALL(nvmlDeviceGetInforomConfigurationChecksum, d);
  if (!checksum) return rc::kInvalidArgument;
  // Stable per board: derived from its serial number.
  *checksum = static_cast<unsigned>(std::hash<std::string>{}(c.sim->identity(c.gpu).serial));
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t d) {
  SIM_DEVICE_CALL(nvmlDeviceValidateInforom, d);
  return rc::kSuccess;
}
