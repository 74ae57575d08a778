// Derived metrics of one GPU (DESIGN principle 4): counters that integrate
// what happened between samples, and peaks over a trailing window.
//
// Integration rule: the trapezoid between consecutive samples of a signal,
// (v[i-1] + v[i]) / 2 x (t[i] - t[i-1]). Conditions (idle: utilization == 0;
// throttled by reason r: bit r set) integrate their 0/1 indicator the same
// way, so a state seen at both ends of an interval counts the whole interval
// and a state seen at one end counts half. Only values read in the sample
// count (not values carried forward between tiers). After Break() (GPU lost)
// the gap is not integrated; totals keep their value and continue.
//
//   kBusySeconds      = integral of utilization.gpu / 100
//   kIdleSeconds      = integral of [utilization.gpu == 0]
//   kSmActiveSeconds  = integral of sm_active / 100 (GPM)
//   kThrottle*        = integral of [reason bit set], kClockReasonTable order
//   kPcieTx/RxBytes   = integral of the PCIe byte rates
//   kEnergyConsumption (only when the device has no energy counter)
//                     = integral of power.draw, in mJ
//   kMemoryUsedPeak, kGpuTempPeak = maximum over the trailing window span
//
// A derived metric is absent until its input has been seen once.
// Thread safety: none; owned by the sampler thread.
#pragma once

#include <array>
#include <deque>
#include <optional>
#include <utility>

#include "gpuscope/catalog.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::collect {

// Trapezoid integral of one sampled signal.
class TrapezoidIntegral {
 public:
  // The first sample starts the total at 0; a sample not later than the
  // previous one only replaces it.
  void Add(double t, double value);
  // The next sample starts a new segment: the gap is not integrated.
  void Break() { last_.reset(); }
  std::optional<double> total() const { return total_; }

 private:
  std::optional<double> total_;
  std::optional<std::pair<double, double>> last_;  // (t, value)
};

// Maximum over the trailing span, ending at the newest sample.
class WindowMax {
 public:
  explicit WindowMax(double span_seconds) : span_(span_seconds) {}
  void Add(double t, double value);
  std::optional<double> Max() const;

 private:
  double span_;
  std::deque<std::pair<double, double>> points_;  // values decrease front to back
};

class Integrator {
 public:
  explicit Integrator(double window_span_seconds)
      : memory_peak_(window_span_seconds), temp_peak_(window_span_seconds) {}

  // Feeds the values `read` holds (taken at t) and writes every derived
  // metric that has a value into `out`. `energy_counter` false: integrate
  // power into kEnergyConsumption.
  void Update(double t, const GpuSample& read, bool energy_counter, GpuSample& out);
  void Break();

 private:
  TrapezoidIntegral busy_, idle_, sm_active_, pcie_tx_, pcie_rx_, energy_mj_;
  std::array<TrapezoidIntegral, kClockReasonTable.size()> throttle_;
  WindowMax memory_peak_, temp_peak_;
};

}  // namespace gpuscope::collect
