// Event sets (nvmlEventSet_t): per-GPU registration masks and a queue of
// pending events. Sets live in a global registry so a stale or freed handle
// is refused instead of dereferenced, and they outlive nvmlShutdown.
//
// Thread safety: all functions are safe from any thread (one registry mutex
// and condition variable). Fire may be called with a GPU's state lock held;
// Wait never holds the registry lock while it calls pump.
#pragma once

#include <functional>

#include "calls.h"
#include "nvml/abi.h"

namespace gpuscope::sim::events {

nvmlEventSet_t CreateSet();
bool FreeSet(nvmlEventSet_t set);
// Adds mask to the set's registration for gpu (its handle is `device`).
bool Register(nvmlEventSet_t set, unsigned gpu, unsigned long long mask);
// Queues an event on every set registered for this type on gpu.
void Fire(unsigned gpu, nvmlDevice_t device, unsigned long long type, unsigned long long data);

enum class WaitResult { kEvent, kTimeout, kInvalidSet, kStopped };
// Pops the oldest event, waiting up to timeout_ms. pump is called about every
// 20 ms to advance simulated time (which may fire events); when it returns
// false the wait ends with kStopped.
WaitResult Wait(nvmlEventSet_t set, nvmlEventData_t* out, unsigned timeout_ms,
                const std::function<bool()>& pump);

}  // namespace gpuscope::sim::events
