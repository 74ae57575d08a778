// Exported entry points: event sets (XID, ECC, GPU unavailable, recovery).
#include "events.h"
#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

SIM_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlEventSetCreate, &sim)) return r;
  if (!set) return rc::kInvalidArgument;
  *set = events::CreateSet();
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d,
                                                         unsigned long long* types) {
  SIM_DEVICE_CALL(nvmlDeviceGetSupportedEventTypes, d);
  if (!types) return rc::kInvalidArgument;
  *types = c.sim->SupportedEvents(c.gpu);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                                 nvmlEventSet_t set) {
  SIM_DEVICE_CALL(nvmlDeviceRegisterEvents, d);
  if (!set) return rc::kInvalidArgument;
  // Any unsupported bit refuses the whole request, as the driver does.
  if (types & ~c.sim->SupportedEvents(c.gpu)) return rc::kNotSupported;
  return events::Register(set, c.gpu, types) ? rc::kSuccess : rc::kInvalidArgument;
}

SIM_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                            unsigned int timeout_ms) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlEventSetWait_v2, &sim)) return r;
  if (!set || !data) return rc::kInvalidArgument;
  std::weak_ptr<Sim> weak = sim;
  sim.reset();  // a wait must not keep a shut-down simulator alive
  auto pump = [&weak]() -> std::optional<double> {
    std::shared_ptr<Sim> s = weak.lock();
    if (!s || s != CurrentSim()) return std::nullopt;
    return s->AdvanceAll();  // crossing a fault's time fires its events
  };
  switch (events::Wait(set, data, timeout_ms, pump)) {
    case events::WaitResult::kEvent:
      return rc::kSuccess;
    case events::WaitResult::kTimeout:
      return rc::kTimeout;
    case events::WaitResult::kStopped:
      return rc::kUninitialized;
    default:
      return rc::kInvalidArgument;
  }
}

SIM_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  CountCall(kFn_nvmlEventSetFree);
  return events::FreeSet(set) ? rc::kSuccess : rc::kInvalidArgument;
}
