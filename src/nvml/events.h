// nvml::EventSet: NVML's event queue (XID critical errors, ECC errors, GPU
// unavailable, recovery actions, ...) for the devices registered on it.
//
// Create -> Register each GPU (the requested mask is first masked with what
// the GPU supports, because NVML registers nothing when any bit is
// unsupported) -> Wait in a loop on a dedicated thread. The set is freed at
// destruction. Events are per GPU, never per MIG device.
//
// Thread safety: one thread at a time (Wait blocks up to its timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gpuscope/status.h"
#include "nvml/device.h"

namespace gpuscope::nvml {

// Event type bits, as NVML defines them.
namespace events {
inline constexpr uint64_t kSingleBitEcc = 0x1;
inline constexpr uint64_t kDoubleBitEcc = 0x2;
inline constexpr uint64_t kPState = 0x4;
inline constexpr uint64_t kXidCritical = 0x8;
inline constexpr uint64_t kClock = 0x10;
inline constexpr uint64_t kPowerSourceChange = 0x80;
inline constexpr uint64_t kMigConfigChange = 0x100;
inline constexpr uint64_t kGpuUnavailable = 0x4000;
inline constexpr uint64_t kGpuRecoveryAction = 0x8000;
// What a health monitor wants.
inline constexpr uint64_t kHealth =
    kSingleBitEcc | kDoubleBitEcc | kXidCritical | kGpuUnavailable | kGpuRecoveryAction;
}  // namespace events

struct Event {
  unsigned device_index = 0;  // NVML index of the GPU
  uint64_t type = 0;          // one events::k* bit
  uint64_t data = 0;          // the XID for kXidCritical (999 = unknown)
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};

class EventSet {
 public:
  // kNotSupported when the driver lacks events.
  static Result<std::unique_ptr<EventSet>> Create(const Library& library);
  ~EventSet();
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;

  // Registers the part of `mask` the GPU supports and returns that part;
  // kNotSupported when it supports none of it.
  Result<uint64_t> Register(const Device& device, uint64_t mask = events::kHealth);
  // The next event, or nullopt when none came within timeout_ms.
  Result<std::optional<Event>> Wait(unsigned timeout_ms);

 private:
  EventSet(const Library& library, void* set) : lib_(&library), set_(set) {}
  unsigned IndexOf(void* handle) const;

  const Library* lib_;
  void* set_;                                        // nvmlEventSet_t
  std::vector<std::pair<void*, unsigned>> devices_;  // handle -> index
};

}  // namespace gpuscope::nvml
