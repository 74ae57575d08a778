// Trailing window of recent samples per GPU (default 10 minutes), kept by the
// sampler for analysis (diagnosis, peaks) and the web page.
//
// Contract: the sampler appends one WindowPoint per GPU per fast cycle (points
// closer than the resolution are merged, so memory is bounded by
// span / resolution); readers get copies. Thread safety: all methods are safe
// to call concurrently.
#pragma once

#include <bitset>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include "gpuscope/catalog.h"

namespace gpuscope {

struct WindowPoint {
  double t = 0;  // unix seconds (or scenario seconds in stepped sampling)
  std::array<float, kMetricCount> values{};
  std::bitset<kMetricCount> present;

  bool Has(Metric m) const { return present.test(Index(m)); }
  double Get(Metric m) const { return values[Index(m)]; }
};

class Window {
 public:
  struct Options {
    double span_seconds = 600;      // how far back points are kept
    double resolution_seconds = 1;  // minimum spacing between kept points
  };
  explicit Window(Options options) : options_(options) {}

  // Appends a point for GPU `gpu` (grows the GPU list as needed); drops points
  // older than span. A point closer than resolution to the last replaces it.
  void Append(std::size_t gpu, const WindowPoint& point);
  // Copies of the points of one GPU with t >= since, oldest first.
  std::vector<WindowPoint> Points(std::size_t gpu, double since = 0) const;
  std::size_t gpu_count() const;
  const Options& options() const { return options_; }

 private:
  Options options_;
  mutable std::mutex mu_;
  std::vector<std::deque<WindowPoint>> gpus_;
};

}  // namespace gpuscope
