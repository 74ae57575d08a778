// libFuzzer target: a ResourceSliceList answer of the API server
// (attribution/resource_slices.h), which a compromised or broken API server
// controls. Any input parses or is refused with a message; what it yields
// holds only UUIDs in NVML's form, and resolving any of its devices is safe.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "attribution/resource_slices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope::attribution;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  SlicePage page = ParseResourceSliceList(text, "gpu-node-1");
  if (!page.error.empty() && !page.devices.empty()) std::abort();
  for (const auto& [key, facts] : page.devices) {
    for (const std::string& uuid : {facts.uuid, facts.parent_uuid}) {
      if (!uuid.empty() && !uuid.starts_with("GPU-") && !uuid.starts_with("MIG-")) std::abort();
    }
  }
  KeepNewestGeneration(page.devices);
  for (const auto& [key, facts] : page.devices) {
    const auto pool_end = key.rfind('/');
    const auto driver_end = key.find('/');
    if (pool_end == std::string::npos || driver_end == pool_end) continue;
    const DraDevice device{key.substr(0, driver_end),
                           key.substr(driver_end + 1, pool_end - driver_end - 1),
                           key.substr(pool_end + 1), "", ""};
    if (DraDeviceId(device, &page.devices) != facts.uuid && !facts.uuid.empty()) std::abort();
  }
  return 0;
}
