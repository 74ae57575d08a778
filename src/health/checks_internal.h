// Internal to src/health: the per-check judges Evaluate calls, and number
// formatting for evidence lines. Not a public API.
#pragma once

#include <string>

#include "health/checks.h"

namespace gpuscope::health::internal {

// Everything one GPU's checks read.
struct GpuInput {
  const GpuInfo& info;
  const GpuSample& sample;
  const GpuEvents* events;  // nullptr when the event thread knows nothing of it
  HealthState::Gpu& prev;
  double now;
  const HealthOptions& options;
};

void CheckMemory(const GpuInput& in, CheckResult& r);
void CheckPcie(const GpuInput& in, CheckResult& r);
// Sets out->up_since and out->nvlinks_down too.
void CheckNvlink(const GpuInput& in, CheckResult& r, GpuHealth* out);
void CheckThermal(const GpuInput& in, CheckResult& r);
void CheckPower(const GpuInput& in, CheckResult& r);
void CheckXid(const GpuInput& in, CheckResult& r);
void CheckFabric(const GpuInput& in, CheckResult& r);
// checks_vgpu.cc: a vGPU guest's licence.
void CheckLicense(const GpuInput& in, CheckResult& r);
// Sets out->lost and out->stale too.
void CheckDriver(const GpuInput& in, CheckResult& r, GpuHealth* out);

// Shortest exact form: 88, 42.5, 1e+06.
std::string Num(double v);
// Clock event reason bits of the sample (0 when absent).
uint64_t ClockReasons(const GpuSample& s);

}  // namespace gpuscope::health::internal
