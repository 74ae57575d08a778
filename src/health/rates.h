// Rates of cumulative hardware error counters (PCIe replays, NVLink CRC
// errors) and the limits DCGM's health module applies to them
// (reference/xid.md).
//
// CounterRate keeps a short history of (time, value) observations of one
// counter so that a rate can be computed over about `window` seconds even when
// the counter itself is refreshed less often than it is observed (slow-tier
// metrics are read every 10-30 s, health is evaluated every cycle). Kept
// points are at least window / kMaxPoints apart (a newer observation replaces
// the newest point until then), so the history is bounded at any cadence: at
// 100 ms it once held 600 points per counter, 11 MB on 64 GPUs.
//
// Thread safety: CounterRate is a plain value, not synchronized; the free
// functions are pure.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

namespace gpuscope::health {

class CounterRate {
 public:
  // Adds an observation at time t (seconds) and returns the rate per second
  // between the oldest kept observation (at most ~window seconds old) and
  // this one, or nullopt while that span is shorter than min_span. A value
  // below the previous one (counter reset by a GPU reset) restarts the
  // history.
  std::optional<double> Observe(double t, double value, double window, double min_span);
  // Seconds covered by the kept history.
  double span() const;
  // Observations kept.
  std::size_t held() const { return points_.size(); }

  static constexpr double kMaxPoints = 30;

 private:
  std::deque<std::pair<double, double>> points_;  // time, value; oldest first
};

// DCGM's per-lane PCIe replay rate (replays per minute per lane) for a link
// generation 1..6; nullopt for other generations.
std::optional<double> PcieReplayRatePerLane(unsigned generation);

// Replays per minute above which DCGM warns: ceil(per-lane rate x lanes);
// nullopt for an unknown generation or zero lanes.
std::optional<double> PcieReplayLimitPerMinute(unsigned generation, unsigned lanes);

}  // namespace gpuscope::health
