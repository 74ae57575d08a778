// Definitions of Device's private call helpers, shared by the device*.cc,
// gpm.cc and events.cc files. Internal to src/nvml.
#pragma once

#include <string>
#include <vector>

#include "nvml/api.h"
#include "nvml/device.h"
#include "nvml/library.h"

namespace gpuscope::nvml {

template <typename Fn, typename... Args>
int Device::Invoke(Fn Api::*fn, Args... args) const {
  return nvml::Invoke(lib_->api(), fn, static_cast<nvmlDevice_t>(handle_), args...);
}

template <typename Fn, typename... Args>
Status Device::Call(Fn Api::*fn, const char* name, Args... args) const {
  return lib_->Check(Invoke(fn, args...), name, label_);
}

// One out-parameter after `args`, read as Raw and returned as Out.
template <typename Out, typename Raw, typename Fn, typename... Args>
Result<Out> Device::Get(Fn Api::*fn, const char* name, Args... args) const {
  Raw raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(fn, name, args..., &raw));
  return static_cast<Out>(raw);
}

template <typename Fn>
Result<std::string> Device::GetString(Fn Api::*fn, const char* name, unsigned size) const {
  std::vector<char> buffer(size + 1, '\0');
  GPUSCOPE_RETURN_IF_ERROR(Call(fn, name, buffer.data(), size));
  return std::string(buffer.data());
}

}  // namespace gpuscope::nvml
