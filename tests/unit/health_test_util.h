// Hand-built snapshots for the health tests.
#pragma once

#include <string>

#include "gpuscope/snapshot.h"
#include "health/checks.h"

namespace gpuscope::health::testing {

inline constexpr double kNow = 1'700'000'000;

// A node with `n` healthy H100s read at kNow: temperatures, limits, PCIe
// Gen5 x16, ECC on and clean, no NVLink.
inline Snapshot HealthyNode(unsigned n) {
  Snapshot snap;
  snap.nvml_up = true;
  snap.timestamp = kNow;
  snap.system.hostname = "node-a";
  for (unsigned i = 0; i < n; ++i) {
    GpuInfo info;
    info.index = i;
    info.uuid = "GPU-0000000" + std::to_string(i);
    info.name = "NVIDIA H100 80GB HBM3";
    info.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    info.minor_number = i;
    snap.gpus.push_back(info);
    GpuSample s;
    s.sampled_at = kNow;
    using enum Metric;
    s.Set(kGpuTemp, 45);
    s.Set(kSlowdownTemp, 87);
    s.Set(kShutdownTemp, 92);
    s.Set(kMemoryTemp, 50);
    s.Set(kMemoryMaxTemp, 95);
    s.Set(kPowerUsage, 300);
    s.Set(kPowerLimit, 700);
    s.Set(kClockReasons, 0);
    s.Set(kPcieLinkGen, 5);
    s.Set(kPcieLinkGenMax, 5);
    s.Set(kPcieLinkWidth, 16);
    s.Set(kPcieLinkWidthMax, 16);
    s.Set(kPcieReplays, 0);
    s.Set(kEccMode, 1);
    s.Set(kEccSbeVolatile, 0);
    s.Set(kEccDbeVolatile, 0);
    s.Set(kRemappedCorrectable, 0);
    s.Set(kRemappedUncorrectable, 0);
    s.Set(kRemappedPending, 0);
    s.Set(kRemappedFailure, 0);
    s.Set(kRecoveryAction, 0);
    snap.samples.push_back(s);
  }
  return snap;
}

// Whether any evidence line of `r` contains `text`.
inline bool HasEvidence(const CheckResult& r, const std::string& text) {
  for (const std::string& line : r.evidence) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

inline std::string Dump(const CheckResult& r) {
  std::string out = std::string(VerdictName(r.verdict)) + ":";
  for (const std::string& line : r.evidence) out += " [" + line + "]";
  return out;
}

}  // namespace gpuscope::health::testing
