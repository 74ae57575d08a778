#include "collect/integrals.h"

#include <cstdint>

namespace gpuscope::collect {
namespace {

using enum Metric;

void SetIf(GpuSample& out, Metric m, std::optional<double> v) {
  if (v) out.Set(m, *v);
}

}  // namespace

void TrapezoidIntegral::Add(double t, double value) {
  if (!total_) total_ = 0;
  if (last_ && t > last_->first) *total_ += (last_->second + value) / 2 * (t - last_->first);
  last_ = {t, value};
}

void WindowMax::Add(double t, double value) {
  while (!points_.empty() && points_.back().second <= value) points_.pop_back();
  points_.emplace_back(t, value);
  while (points_.front().first < t - span_) points_.pop_front();
}

std::optional<double> WindowMax::Max() const {
  if (points_.empty()) return std::nullopt;
  return points_.front().second;
}

void Integrator::Update(double t, const GpuSample& read, bool energy_counter, GpuSample& out) {
  // A MIG instance has no utilization of its own: its GPM activity instead.
  auto util = read.Find(kGpuUtil);
  if (!util) util = read.Find(kGrEngineActive);
  if (util) {
    busy_.Add(t, *util / 100);
    idle_.Add(t, *util == 0 ? 1 : 0);
  }
  if (auto sm = read.Find(kSmActive)) sm_active_.Add(t, *sm / 100);
  if (auto tx = read.Find(kPcieTxBytesRate)) pcie_tx_.Add(t, *tx);
  if (auto rx = read.Find(kPcieRxBytesRate)) pcie_rx_.Add(t, *rx);
  if (auto reasons = read.Find(kClockReasons)) {
    const auto bits = static_cast<uint64_t>(*reasons);
    for (std::size_t i = 0; i < kClockReasonTable.size(); ++i) {
      throttle_[i].Add(t, (bits & kClockReasonTable[i].bit) ? 1 : 0);
    }
  }
  if (!energy_counter) {
    if (auto watts = read.Find(kPowerUsage)) energy_mj_.Add(t, *watts * 1000);
    SetIf(out, kEnergyConsumption, energy_mj_.total());
  }
  if (auto used = read.Find(kMemoryUsed)) memory_peak_.Add(t, *used);
  if (auto temp = read.Find(kGpuTemp)) temp_peak_.Add(t, *temp);

  SetIf(out, kBusySeconds, busy_.total());
  SetIf(out, kIdleSeconds, idle_.total());
  SetIf(out, kSmActiveSeconds, sm_active_.total());
  SetIf(out, kPcieTxBytes, pcie_tx_.total());
  SetIf(out, kPcieRxBytes, pcie_rx_.total());
  for (std::size_t i = 0; i < kClockReasonTable.size(); ++i) {
    SetIf(out, kClockReasonTable[i].seconds_metric, throttle_[i].total());
  }
  SetIf(out, kMemoryUsedPeak, memory_peak_.Max());
  SetIf(out, kGpuTempPeak, temp_peak_.Max());
}

void Integrator::Break() {
  for (TrapezoidIntegral* i : {&busy_, &idle_, &sm_active_, &pcie_tx_, &pcie_rx_, &energy_mj_}) {
    i->Break();
  }
  for (TrapezoidIntegral& i : throttle_) i.Break();
}

}  // namespace gpuscope::collect
