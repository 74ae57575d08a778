#include "sim.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "events.h"
#include "handles.h"
#include "storm.h"

namespace gpuscope::sim {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// PCI buses of the eight GPUs of an HGX H100 board.
constexpr unsigned kHgxBuses[8] = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};

}  // namespace

Identity MakeIdentity(const GpuSpec& spec, uint64_t seed, unsigned index) {
  Identity id;
  uint64_t a = Mix(seed * 0x1000193 + index), b = Mix(a ^ 0xC0FFEE);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>(a >> 16) & 0xFFFF, static_cast<unsigned>(a) & 0xFFFF,
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b) & 0xFFFFFFFFFFFFull);
  id.uuid = spec.uuid.empty() ? buf : spec.uuid;
  std::snprintf(buf, sizeof buf, "16%011llu", static_cast<unsigned long long>(b % 100000000000ull));
  id.serial = spec.serial.empty() ? buf : spec.serial;
  id.minor = MinorNumber(spec, index);
  id.domain = index / 8;
  id.bus = spec.pci_bus ? spec.pci_bus : kHgxBuses[index % 8];
  std::snprintf(buf, sizeof buf, "%08X:%02X:00.0", id.domain, id.bus);
  id.bus_id = buf;
  std::snprintf(buf, sizeof buf, "%04X:%02X:00.0", id.domain, id.bus);
  id.bus_id_legacy = buf;
  return id;
}

std::string MigUuid(const std::string& parent_uuid, unsigned gi_id) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char ch : parent_uuid) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3ull;
  uint64_t a = Mix(h + gi_id), b = Mix(a ^ 0x4D4947);
  char buf[64];
  std::snprintf(buf, sizeof buf, "MIG-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>(a >> 16) & 0xFFFF, static_cast<unsigned>(a) & 0xFFFF,
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b) & 0xFFFFFFFFFFFFull);
  return buf;
}

Sim::Sim(Scenario scenario, TimeOptions time)
    : scenario_(std::move(scenario)),
      time_(time),
      start_(std::chrono::steady_clock::now()),
      frozen_(time.frozen ? *time.frozen : std::numeric_limits<double>::quiet_NaN()) {
  std::sscanf(scenario_.driver_version.c_str(), "%u", &driver_major_);
  epoch_us_ =
      static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  for (unsigned i = 0; i < scenario_.gpus.size(); ++i) {
    auto gpu = std::make_unique<Gpu>();
    gpu->spec = scenario_.gpus[i];
    gpu->id = MakeIdentity(gpu->spec, scenario_.seed, i);
    gpu->faults = gpu->spec.faults;
    gpu->announced.assign(gpu->faults.size(), false);
    gpus_.push_back(std::move(gpu));
  }
}

double Sim::Now() const {
  double f = frozen_.load();
  if (!std::isnan(f)) return f;
  std::chrono::duration<double> since = std::chrono::steady_clock::now() - start_;
  return time_.start_offset + since.count() * time_.time_scale;
}

void Sim::Announce(unsigned g, Gpu& gpu, const std::vector<size_t>& onsets) {
  nvmlDevice_t dev = DeviceHandle(g);
  for (size_t i : onsets) {
    if (gpu.announced[i]) continue;
    gpu.announced[i] = true;
    const FaultSpec& f = gpu.faults[i];
    switch (f.kind) {
      case FaultKind::kXid:
        events::Fire(g, dev, 0x8, f.xid);
        break;
      case FaultKind::kEccSbe:
        events::Fire(g, dev, 0x1, 0);
        break;
      case FaultKind::kEccDbe:
        events::Fire(g, dev, 0x2, 0);
        events::Fire(g, dev, 0x8, 48);
        break;
      case FaultKind::kRowRemapFailure:
        events::Fire(g, dev, 0x8, 64);
        break;
      case FaultKind::kLost:
        events::Fire(g, dev, 0x4000, 0);
        break;
      case FaultKind::kRecoveryAction:
        events::Fire(g, dev, 0x8, 154);
        events::Fire(g, dev, 0x8000, f.action);
        break;
      default:
        break;
    }
  }
}

void Sim::AdvanceLocked(unsigned g, Gpu& gpu, int64_t target) {
  PhysicsInput in{gpu.spec, scenario_.seed, g, gpu.faults, &gpu.attached};
  std::vector<size_t> onsets;
  if (gpu.cache.step < 0 || gpu.cache.step > target) {
    gpu.cache = InitialState(in, &onsets);
  }
  while (gpu.cache.step < target) Step(in, gpu.cache, &onsets);
  Announce(g, gpu, onsets);
}

GpuState Sim::StateAt(unsigned g, double t) {
  Gpu& gpu = *gpus_[g];
  std::lock_guard lock(gpu.mu);
  AdvanceLocked(g, gpu, std::max<int64_t>(0, StepAt(t)));
  return gpu.cache;
}

void Sim::Freeze(double t) {
  frozen_.store(t);
  events::Wake();  // the jump may cross fault onsets
}

double Sim::AdvanceAll() {
  double t = Now();
  double next = std::numeric_limits<double>::infinity();
  for (unsigned g = 0; g < gpus_.size(); ++g) {
    Gpu& gpu = *gpus_[g];
    std::lock_guard lock(gpu.mu);
    AdvanceLocked(g, gpu, std::max<int64_t>(0, StepAt(t)));
    for (size_t i = 0; i < gpu.faults.size(); ++i) {
      // An onset lands when the step that holds its time is reached.
      if (!gpu.announced[i]) next = std::min(next, StepAt(gpu.faults[i].at) * kStepSeconds);
    }
    next = std::min(next, storm::FireDue(g, DeviceHandle(g), gpu.faults, gpu.storm_fired, t));
  }
  if (!std::isnan(frozen_.load()) || time_.time_scale <= 0) {
    return std::numeric_limits<double>::infinity();
  }
  return std::max(0.0, (next - t) / time_.time_scale);
}

template <typename F>
auto Sim::WithFaults(unsigned g, F&& f) {
  std::lock_guard lock(gpus_[g]->mu);
  return f(gpus_[g]->faults);
}

bool Sim::Lost(unsigned g, double t) {
  return WithFaults(g, [t](const std::vector<FaultSpec>& faults) {
    for (const FaultSpec& f : faults) {
      if (f.kind == FaultKind::kLost && FaultActiveAt(f, t)) return true;
    }
    return false;
  });
}

double Sim::HangSeconds(unsigned g, Fn fn, double t) {
  return WithFaults(g, [fn, t](const std::vector<FaultSpec>& faults) {
    for (const FaultSpec& f : faults) {
      if (f.kind != FaultKind::kHang || !FaultActiveAt(f, t)) continue;
      if (f.function == "any" || f.function == FnName(fn)) return f.seconds;
    }
    return 0.0;
  });
}

int Sim::FailCode(unsigned g, Fn fn, double t) {
  return WithFaults(g, [fn, t](const std::vector<FaultSpec>& faults) {
    for (const FaultSpec& f : faults) {
      if (f.kind != FaultKind::kFail || !FaultActiveAt(f, t)) continue;
      if (f.function == "any" || f.function == FnName(fn)) return f.code;
    }
    return 0;
  });
}

unsigned Sim::RecoveryAction(unsigned g, double t) {
  return WithFaults(g, [t](const std::vector<FaultSpec>& faults) {
    unsigned action = 0;
    for (const FaultSpec& f : faults) {
      if (f.kind == FaultKind::kRecoveryAction && FaultActiveAt(f, t)) action = f.action;
    }
    return action;
  });
}

std::vector<FaultSpec> Sim::Faults(unsigned g) {
  return WithFaults(g, [](const std::vector<FaultSpec>& faults) { return faults; });
}

unsigned long long Sim::SupportedEvents(unsigned g) const {
  unsigned long long types = 0x8;  // XidCriticalError
  if (gpus_[g]->spec.preset->ecc) types |= 0x1 | 0x2;
  if (driver_major_ >= 570) types |= 0x4000 | 0x8000;
  return types;
}

void Sim::Inject(unsigned g, FaultSpec f) {
  double now = Now();
  Gpu& gpu = *gpus_[g];
  std::lock_guard lock(gpu.mu);
  f.at = std::max(0.0, now);
  f.until = kForever;
  gpu.faults.push_back(f);
  gpu.announced.push_back(false);
  int64_t target = std::max<int64_t>(0, StepAt(now));
  AdvanceLocked(g, gpu, target);
  // The cached step may already be past the fault's step (frozen time):
  // apply its onset now; a recomputation from t = 0 applies it in order.
  if (!gpu.announced.back()) {
    PhysicsInput in{gpu.spec, scenario_.seed, g, gpu.faults};
    ApplyOnset(in, gpu.faults.back(), gpu.cache);
    Announce(g, gpu, {gpu.faults.size() - 1});
  }
}

void Sim::Clear(unsigned g, std::optional<FaultKind> kind) {
  double now = Now();
  Gpu& gpu = *gpus_[g];
  std::lock_guard lock(gpu.mu);
  for (FaultSpec& f : gpu.faults) {
    if (kind && f.kind != *kind) continue;
    if (FaultActiveAt(f, now)) f.until = std::max(f.at, now);
  }
}

}  // namespace gpuscope::sim
