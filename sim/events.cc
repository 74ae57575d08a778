#include "events.h"

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>

// NVML leaves this type opaque; the simulator defines it.
struct nvmlEventSet_st {
  std::array<unsigned long long, gpuscope::sim::kMaxGpus> masks{};
  std::deque<nvmlEventData_t> queue;
};

namespace gpuscope::sim::events {
namespace {

struct Registry {
  std::mutex mu;
  std::condition_variable cv;
  std::set<nvmlEventSet_t> live;
};

Registry& Reg() {
  static Registry* r = new Registry;  // never destroyed: used until process exit
  return *r;
}

}  // namespace

nvmlEventSet_t CreateSet() {
  auto* set = new nvmlEventSet_st;
  std::lock_guard lock(Reg().mu);
  Reg().live.insert(set);
  return set;
}

bool FreeSet(nvmlEventSet_t set) {
  {
    std::lock_guard lock(Reg().mu);
    if (!Reg().live.erase(set)) return false;
  }
  Reg().cv.notify_all();
  delete set;
  return true;
}

bool Register(nvmlEventSet_t set, unsigned gpu, unsigned long long mask) {
  std::lock_guard lock(Reg().mu);
  if (!Reg().live.count(set) || gpu >= kMaxGpus) return false;
  set->masks[gpu] |= mask;
  return true;
}

void Fire(unsigned gpu, nvmlDevice_t device, unsigned long long type, unsigned long long data) {
  if (gpu >= kMaxGpus) return;
  {
    std::lock_guard lock(Reg().mu);
    for (nvmlEventSet_t set : Reg().live) {
      if (!(set->masks[gpu] & type)) continue;
      set->queue.push_back({device, type, data, 0xFFFFFFFFu, 0xFFFFFFFFu});
    }
  }
  Reg().cv.notify_all();
}

void Wake() { Reg().cv.notify_all(); }

WaitResult Wait(nvmlEventSet_t set, nvmlEventData_t* out, unsigned timeout_ms, const Pump& pump) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::optional<double> next_s = pump();
    if (!next_s) return WaitResult::kStopped;
    std::unique_lock lock(Reg().mu);
    if (!Reg().live.count(set)) return WaitResult::kInvalidSet;
    if (!set->queue.empty()) {
      *out = set->queue.front();
      set->queue.pop_front();
      return WaitResult::kEvent;
    }
    auto now = Clock::now();
    if (now >= deadline) return WaitResult::kTimeout;
    Clock::duration slice = deadline - now;
    // 1 ms past the onset, so the pump finds its step reached.
    if (*next_s < std::chrono::duration<double>(slice).count()) {
      slice = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*next_s)) +
              std::chrono::milliseconds(1);
    }
    Reg().cv.wait_for(lock, slice);
  }
}

}  // namespace gpuscope::sim::events
