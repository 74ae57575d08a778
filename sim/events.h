// Event sets (nvmlEventSet_t): per-GPU registration masks and a queue of
// pending events. Sets live in a global registry so a stale or freed handle
// is refused instead of dereferenced, and they outlive nvmlShutdown.
//
// Thread safety: all functions are safe from any thread (one registry mutex
// and condition variable). Fire may be called with a GPU's state lock held;
// Wait never holds the registry lock while it calls pump.
#pragma once

#include <functional>
#include <optional>

#include "calls.h"
#include "nvml/abi.h"

namespace gpuscope::sim::events {

nvmlEventSet_t CreateSet();
bool FreeSet(nvmlEventSet_t set);
// Adds mask to the set's registration for gpu (its handle is `device`).
bool Register(nvmlEventSet_t set, unsigned gpu, unsigned long long mask);
// Queues an event on every set registered for this type on gpu.
void Fire(unsigned gpu, nvmlDevice_t device, unsigned long long type, unsigned long long data);

// Wakes every waiter so it pumps again (simulated time jumped, or the
// simulator stopped).
void Wake();

enum class WaitResult { kEvent, kTimeout, kInvalidSet, kStopped };
// Advances simulated time (which may fire events) and says in how many wall
// seconds it must run again (the next fault onset; infinity when none), or
// nullopt when the simulator has stopped.
using Pump = std::function<std::optional<double>()>;
// Pops the oldest event, waiting up to timeout_ms. pump runs at the start and
// whenever the wait wakes: at the time it asked for, on Fire, or on Wake. A
// real driver sleeps in the kernel until an event; so does this, instead of
// polling (an idle agent's cost is measured with the simulator included).
WaitResult Wait(nvmlEventSet_t set, nvmlEventData_t* out, unsigned timeout_ms, const Pump& pump);

}  // namespace gpuscope::sim::events
