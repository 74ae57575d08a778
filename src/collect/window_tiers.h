// The storage of one GPU's trailing window: recent points at full resolution
// and levels of buckets (the contract is in include/gpuscope/window.h).
//
// Thread safety: none; Window locks around it.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "gpuscope/window.h"

namespace gpuscope {

// Accumulates points (samples or buckets) into one bucket.
class BucketBuilder {
 public:
  bool empty() const { return samples_ == 0; }
  double t() const { return t_; }
  double slot() const { return slot_; }
  // Adds `p`, which stands for `seconds`; the first point sets t and slot.
  void Add(const WindowPoint& p, double seconds, double slot);
  WindowPoint Build() const;
  void Clear();

 private:
  double t_ = 0, slot_ = 0, seconds_ = 0;
  uint32_t samples_ = 0;
  std::bitset<kMetricCount> present_;
  // Per metric: weight, the first value (a counter's value at t, and the
  // reference that keeps the sums of a gauge small), sums of weighted
  // deviations from it and of their squares, extremes.
  std::array<double, kMetricCount> weight_{}, first_{}, sum_{}, sum_sq_{};
  std::array<float, kMetricCount> min_{}, max_{};
  // Bitmask metrics: seconds each bit was set.
  std::vector<std::pair<uint16_t, std::array<double, 64>>> bit_seconds_;
  std::array<double, 64>& BitSeconds(std::size_t metric);
  const std::array<double, 64>* FindBitSeconds(std::size_t metric) const;
};

class WindowTiers {
 public:
  explicit WindowTiers(const Window::Options& options);

  void Append(const WindowPoint& point);
  // Oldest first, t >= since; samples get their `seconds`.
  std::vector<WindowPoint> Points(double since) const;
  std::size_t Held() const;

 private:
  struct Level {
    Window::Level def;
    std::deque<WindowPoint> closed;
    BucketBuilder open;
  };
  // Moves the oldest recent point into the level that fits its age.
  void Retire(double newest);
  // Moves buckets past their level's horizon to the next level.
  void Cascade(double newest);
  void AddToLevel(std::size_t level, const WindowPoint& p, double seconds);
  void DropBefore(double cutoff);

  const Window::Options& options_;
  std::deque<WindowPoint> recent_;
  std::vector<Level> levels_;
};

}  // namespace gpuscope
