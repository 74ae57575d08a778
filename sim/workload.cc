#include "workload.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

const Segment* ActiveSegment(const std::vector<Segment>& timeline, double t) {
  const Segment* active = nullptr;
  for (const Segment& s : timeline) {
    if (s.at > t) break;
    active = &s;
  }
  return active;
}

// Piecewise-linear value of a custom curve at local time lt.
double CurveAt(const Segment& s, double lt) {
  const auto& p = s.points;
  if (s.repeat && p.back().first > 0) lt = std::fmod(lt, p.back().first);
  if (lt <= p.front().first) return p.front().second;
  for (size_t i = 1; i < p.size(); ++i) {
    if (lt <= p[i].first) {
      double f = (lt - p[i - 1].first) / (p[i].first - p[i - 1].first);
      return p[i - 1].second + f * (p[i].second - p[i - 1].second);
    }
  }
  return p.back().second;
}

// Scale of the segment's levels at t: the custom curve times the on/off
// oscillation (a starved dataloader: busy for duty * period, then low).
double LevelFactor(const Segment& s, double t) {
  double lt = t - s.at;
  double f = s.kind == WorkloadKind::kCustom ? CurveAt(s, lt) : 1.0;
  if (s.period_s > 0 && std::fmod(lt, s.period_s) >= s.duty * s.period_s) f *= s.low;
  return f;
}

}  // namespace

double Noise01(uint64_t seed, unsigned gpu, int64_t step, unsigned channel) {
  uint64_t h = SplitMix64(seed ^ SplitMix64(gpu * 0x100000001B3ull + channel));
  h = SplitMix64(h ^ static_cast<uint64_t>(step));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

Activity EvaluateWorkload(const std::vector<Segment>& timeline, double t, uint64_t seed,
                          unsigned gpu, int64_t step) {
  Activity a;
  const Segment* s = ActiveSegment(timeline, t);
  if (!s) return a;
  if (s->memory_used_gib) a.memory_gib = *s->memory_used_gib;
  if (s->kind == WorkloadKind::kIdle) return a;
  double f = LevelFactor(*s, t);
  unsigned channel = 0;
  auto level = [&](double base) {
    double n = s->noise * (2 * Noise01(seed, gpu, step, channel++) - 1);
    return base * f > 0 ? std::clamp(base * f + n, 0.0, 1.0) : 0.0;
  };
  auto traffic = [&](double mbps) {
    double n = 1 + s->noise * (2 * Noise01(seed, gpu, step, channel++) - 1);
    return std::max(0.0, mbps * 1e6 * f * n);
  };
  a.util = level(s->util);
  a.sm = std::min(level(s->sm_activity), a.util);
  a.occupancy = std::min(level(s->sm_occupancy), a.sm);
  a.tensor = std::min(level(s->tensor_activity), a.sm);
  a.dram = level(s->dram_activity);
  a.fp64 = level(s->fp64_activity);
  a.fp32 = level(s->fp32_activity);
  a.fp16 = level(s->fp16_activity);
  a.pcie_tx = traffic(s->pcie_tx_mbps);
  a.pcie_rx = traffic(s->pcie_rx_mbps);
  a.nvlink_tx = traffic(s->nvlink_tx_mbps);
  a.nvlink_rx = traffic(s->nvlink_rx_mbps);
  if (s->burst_every_s > 0 && std::fmod(t - s->at, s->burst_every_s) < s->burst_s) {
    a.power_boost = s->burst_power;
  }
  return a;
}

double PowerActivity(const Activity& a) {
  // Weighted so that a compute-bound training step (sm 0.85, tensor 0.6,
  // dram 0.55) lands near 0.75 of the board's peak demand.
  return std::clamp(0.15 * a.util + 0.4 * a.sm + 0.3 * a.tensor + 0.2 * a.dram, 0.0, 1.0);
}

}  // namespace gpuscope::sim
