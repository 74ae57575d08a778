#include "health/rates.h"

#include <array>
#include <cmath>

namespace gpuscope::health {

std::optional<double> CounterRate::Observe(double t, double value, double window, double min_span) {
  if (!points_.empty() && (value < points_.back().second || t < points_.back().first)) {
    points_.clear();  // counter reset, or the clock went backwards
  }
  const std::size_t n = points_.size();
  if (n >= 1 && t == points_.back().first) {
    points_.back().second = value;
  } else if (n >= 2 && t - points_[n - 2].first < window / kMaxPoints) {
    points_.back() = {t, value};  // too close to the one before: the newest moves on
  } else {
    points_.emplace_back(t, value);
  }
  // Keep the newest point that is at least `window` old as the anchor.
  while (points_.size() >= 2 && points_[1].first <= t - window) points_.pop_front();
  const double span = t - points_.front().first;
  if (span < min_span || span <= 0) return std::nullopt;
  return (value - points_.front().second) / span;
}

double CounterRate::span() const {
  return points_.empty() ? 0 : points_.back().first - points_.front().first;
}

std::optional<double> PcieReplayRatePerLane(unsigned generation) {
  constexpr std::array<double, 6> kPerLane = {0.15, 0.3, 0.48, 0.96, 1.92, 3.84};
  if (generation < 1 || generation > kPerLane.size()) return std::nullopt;
  return kPerLane[generation - 1];
}

std::optional<double> PcieReplayLimitPerMinute(unsigned generation, unsigned lanes) {
  const std::optional<double> per_lane = PcieReplayRatePerLane(generation);
  if (!per_lane || lanes == 0) return std::nullopt;
  // Rounded to 1e-6 first so that float error (0.3 x 10 = 3.0000000000000004)
  // does not push the ceiling up by one.
  return std::ceil(std::round(*per_lane * lanes * 1e6) / 1e6);
}

}  // namespace gpuscope::health
