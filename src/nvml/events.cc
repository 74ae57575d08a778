#include "nvml/events.h"

#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

static_assert(events::kSingleBitEcc == kEventSingleBitEcc);
static_assert(events::kDoubleBitEcc == kEventDoubleBitEcc);
static_assert(events::kPState == kEventPState);
static_assert(events::kXidCritical == kEventXidCritical);
static_assert(events::kClock == kEventClock);
static_assert(events::kPowerSourceChange == kEventPowerSourceChange);
static_assert(events::kMigConfigChange == kEventMigConfigChange);
static_assert(events::kGpuUnavailable == kEventGpuUnavailable);
static_assert(events::kGpuRecoveryAction == kEventGpuRecoveryAction);

nvmlEventSet_t AsSet(void* p) { return static_cast<nvmlEventSet_t>(p); }

std::optional<uint32_t> InstanceId(unsigned id) {
  if (id == kNoInstanceId) return std::nullopt;
  return id;
}

}  // namespace

Result<std::unique_ptr<EventSet>> EventSet::Create(const Library& library) {
  nvmlEventSet_t set = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(library.Check(Invoke(library.api(), &Api::nvmlEventSetCreate, &set),
                                         "nvmlEventSetCreate", ""));
  return std::unique_ptr<EventSet>(new EventSet(library, set));
}

EventSet::~EventSet() {
  if (set_ != nullptr) Invoke(lib_->api(), &Api::nvmlEventSetFree, AsSet(set_));
}

Result<uint64_t> EventSet::Register(const Device& device, uint64_t mask) {
  auto supported =
      device.Get<uint64_t, unsigned long long>(GPUSCOPE_NVML_FN(nvmlDeviceGetSupportedEventTypes));
  if (!supported.ok()) return supported.status();
  const uint64_t wanted = mask & *supported;
  if (wanted == 0) {
    return Status::NotSupported("nvmlDeviceRegisterEvents (" + device.label() +
                                "): none of the requested event types is supported");
  }
  GPUSCOPE_RETURN_IF_ERROR(device.Call(GPUSCOPE_NVML_FN(nvmlDeviceRegisterEvents),
                                       static_cast<unsigned long long>(wanted), AsSet(set_)));
  devices_.emplace_back(device.handle(), device.index());
  return wanted;
}

Result<std::optional<Event>> EventSet::Wait(unsigned timeout_ms) {
  nvmlEventData_t data{};
  const int rc = Invoke(lib_->api(), &Api::nvmlEventSetWait_v2, AsSet(set_), &data, timeout_ms);
  if (rc == kTimeout) return std::optional<Event>();
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlEventSetWait_v2", ""));
  Event event;
  event.device_index = IndexOf(data.device);
  event.type = data.eventType;
  event.data = data.eventData;
  event.gpu_instance_id = InstanceId(data.gpuInstanceId);
  event.compute_instance_id = InstanceId(data.computeInstanceId);
  return std::optional<Event>(event);
}

unsigned EventSet::IndexOf(void* handle) const {
  for (const auto& [h, index] : devices_) {
    if (h == handle) return index;
  }
  // Not registered here (should not happen): ask NVML.
  unsigned index = 0;
  Invoke(lib_->api(), &Api::nvmlDeviceGetIndex, static_cast<nvmlDevice_t>(handle), &index);
  return index;
}

}  // namespace gpuscope::nvml
