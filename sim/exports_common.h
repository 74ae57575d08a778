// Shared plumbing of the exported C entry points: the export attribute, the
// per-call preamble (count, init check, handle check, lost GPU, hang) and the
// output helpers every getter uses.
//
// Thread safety: safe from any thread; a DeviceCall is local to one call.
#pragma once

#include <memory>
#include <string>

#include "calls.h"
#include "handles.h"
#include "nvml/abi.h"
#include "sim.h"

#define SIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpuscope::sim {

namespace rc {
constexpr nvmlReturn_t kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3,
                       kNotFound = 6, kInsufficientSize = 7, kTimeout = 10, kGpuIsLost = 15,
                       kArgumentVersionMismatch = 25, kUnknown = 999;
}  // namespace rc

struct DeviceCall {
  std::shared_ptr<Sim> sim;
  unsigned gpu = 0;
  int mig = -1;    // MIG device index, -1 for a whole GPU
  double now = 0;  // scenario seconds
  GpuState st;     // the GPU's state at now

  const GpuSpec& spec() const { return sim->spec(gpu); }
  const Preset& preset() const { return *spec().preset; }
  const MigInstanceSpec* mig_instance() const {
    return mig >= 0 ? &spec().mig_instances[mig] : nullptr;
  }
  // Scenario time in microseconds, anchored at the wall clock of nvmlInit.
  unsigned long long TimestampUs() const;
};

enum class MigHandles { kRefuse, kAllow };

// Counts the call; UNINITIALIZED before init.
nvmlReturn_t BeginCall(Fn fn, std::shared_ptr<Sim>* sim);
// Counts the call and checks it: UNINITIALIZED, INVALID_ARGUMENT for a bad
// handle, NOT_SUPPORTED for MIG handles unless allowed, GPU_IS_LOST; sleeps
// for an active hang (no lock held); then snapshots the GPU's state.
nvmlReturn_t BeginDeviceCall(Fn fn, nvmlDevice_t d, DeviceCall* c, MigHandles mig);

// Copies s with its NUL; INSUFFICIENT_SIZE when len is too small.
nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned len);

}  // namespace gpuscope::sim

// Preamble of a device getter: declares DeviceCall c or returns the error.
#define SIM_DEVICE_CALL(fn, d)                                                                   \
  ::gpuscope::sim::DeviceCall c;                                                                 \
  if (nvmlReturn_t rc_ = ::gpuscope::sim::BeginDeviceCall(::gpuscope::sim::kFn_##fn, d, &c,      \
                                                          ::gpuscope::sim::MigHandles::kRefuse)) \
  return rc_

#define SIM_DEVICE_CALL_MIG(fn, d)                                                              \
  ::gpuscope::sim::DeviceCall c;                                                                \
  if (nvmlReturn_t rc_ = ::gpuscope::sim::BeginDeviceCall(::gpuscope::sim::kFn_##fn, d, &c,     \
                                                          ::gpuscope::sim::MigHandles::kAllow)) \
  return rc_
