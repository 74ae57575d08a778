// The typed NVML function table and the one path every NVML call takes.
//
// Internal to src/nvml (and its unit tests): it spells NVML's C types, so
// code outside src/nvml uses library.h, device.h, gpm.h and events.h instead.
// Api is filled once by Library::Open and read-only afterwards; NVML itself is
// thread safe, so Invoke may run on any thread.
#pragma once

#include "nvml/abi.h"

namespace gpuscope::nvml {

// One typed pointer per row of GPUSCOPE_NVML_SYMBOLS, named by the exported
// symbol; null when an optional symbol is not exported.
struct Api {
#define GPUSCOPE_NVML_POINTER(name, need, params) decltype(&::name) name = nullptr;
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_NVML_POINTER)
#undef GPUSCOPE_NVML_POINTER
  decltype(&::nvmlErrorString) nvmlErrorString = nullptr;
};

// Every call into NVML goes through here (the hook for a call counter, a
// watchdog or GPU-lost bookkeeping). A symbol the driver does not export
// reads as NVML_ERROR_FUNCTION_NOT_FOUND.
template <typename Fn, typename... Args>
int Invoke(const Api& api, Fn Api::*fn, Args... args) {
  const Fn f = api.*fn;
  if (f == nullptr) return kFunctionNotFound;
  return f(args...);
}

}  // namespace gpuscope::nvml

// Expands to the member pointer and the exported name of one Api entry.
#define GPUSCOPE_NVML_FN(name) &::gpuscope::nvml::Api::name, #name
