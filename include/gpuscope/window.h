// Trailing window of recent samples per GPU (default 10 minutes), kept by the
// sampler for analysis (diagnosis, peaks) and the web page.
//
// Contract: the sampler appends one WindowPoint per GPU per fast cycle. Memory
// per GPU is bounded independent of cadence, in tiers:
//  - the newest `recent_points` points at full resolution (a sample closer
//    than half `resolution_seconds` to the last, when the last was as close
//    to the one before, replaces it: newest values win);
//  - older ones merged into buckets, aligned to multiples of each level's
//    width: a point leaving the recent tier joins the finest level whose
//    horizon (age) still covers it, and a bucket older than its level's
//    horizon joins the next level. Defaults: 1 s buckets up to 60 s old, 20 s
//    buckets up to the span.
// So a GPU holds at most recent_points + sum(horizon / width) points (plus one
// open bucket per level): 60 + 60 + 30 by default, at 100 ms or at 1 s. So
// the last minute is at full resolution at 1 s, and at 1 s buckets (mean,
// extremes and spread of the samples) or better at faster cadences.
//
// A point stands for the time from its `t` to the next point. `seconds` says
// how long that is (Points() fills it for samples too; the newest gets the
// spacing before it), so consumers that average, share or count over points
// weight each by it (analysis/window_stats.h). In a bucket (several samples):
//  - a gauge holds its time-weighted mean, and, when it varied in the bucket,
//    its min, max and standard deviation in `spreads`;
//  - a counter holds its value at `t` (the bucket's first sample), so
//    differences between points stay exact rates;
//  - a bitmask (clock event reasons) holds the OR of its values, with the AND
//    as min and the OR as max in `spreads`, and for each bit set only part
//    of the time its share of the time in `bit_shares`.
// Readers get copies. Thread safety: all methods are safe to call concurrently.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "gpuscope/catalog.h"

namespace gpuscope {

// How one metric varied inside a bucket.
struct Spread {
  uint16_t metric = 0;  // Index(Metric)
  float min = 0, max = 0, stddev = 0;
};

// Share of a bucket's time during which one bit of a bitmask was set, for the
// bits set for part of it only.
struct BitShare {
  uint16_t metric = 0;  // Index(Metric)
  uint8_t bit = 0;
  float share = 0;
};

struct WindowPoint {
  double t = 0;  // unix seconds (or scenario seconds in stepped sampling)
  // Seconds this point stands for (see the contract); 0 when unknown (a point
  // built outside the window: consumers then use the spacing to the next).
  float seconds = 0;
  uint32_t samples = 1;  // samples merged into it (more than one: a bucket)
  std::array<float, kMetricCount> values{};
  std::bitset<kMetricCount> present;
  std::vector<Spread> spreads;       // metrics that varied in a bucket, by metric
  std::vector<BitShare> bit_shares;  // bits of a bitmask set for part of a bucket

  bool Has(Metric m) const { return present.test(Index(m)); }
  double Get(Metric m) const { return values[Index(m)]; }
  // Extremes and spread within the point; a sample's are its value and 0.
  double Min(Metric m) const;
  double Max(Metric m) const;
  double Stddev(Metric m) const;
  // Share of the point's time during which `bit` of bitmask `m` was set.
  double BitTimeShare(Metric m, unsigned bit) const;

 private:
  const Spread* SpreadOf(Metric m) const;
};

class WindowTiers;  // per-GPU storage (src/collect/window_tiers.h)

class Window {
 public:
  struct Level {
    double width_seconds;    // bucket width (buckets align to multiples of it)
    double horizon_seconds;  // older buckets move to the next level
  };
  struct Options {
    double span_seconds = 600;      // how far back points are kept
    double resolution_seconds = 1;  // the sampler's cadence (see the contract)
    std::size_t recent_points = 60;
    // Finest first; the last level keeps its buckets until the span.
    std::vector<Level> levels = {{1, 60}, {20, 600}};
  };
  explicit Window(Options options);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  // Appends a point for GPU `gpu` (grows the GPU list as needed); moves aged
  // points into buckets and drops those older than span.
  void Append(std::size_t gpu, const WindowPoint& point);
  // Copies of the points of one GPU with t >= since, oldest first.
  std::vector<WindowPoint> Points(std::size_t gpu, double since = 0) const;
  // Points held for one GPU (recent points and buckets, open ones included).
  std::size_t HeldPoints(std::size_t gpu) const;

  // The vGPU instances of a host board, each a window of its own under its
  // NVML instance id, fed at the slow tier's cadence (the diagnosis of each
  // virtual GPU). AppendInstances appends one point per instance read and
  // drops the windows of instances no longer on the board.
  void AppendInstances(std::size_t gpu,
                       const std::vector<std::pair<uint32_t, WindowPoint>>& points);
  std::vector<WindowPoint> InstancePoints(std::size_t gpu, uint32_t instance,
                                          double since = 0) const;
  std::size_t gpu_count() const;
  const Options& options() const { return options_; }

 private:
  Options options_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<WindowTiers>> gpus_;
  std::map<std::pair<std::size_t, uint32_t>, std::unique_ptr<WindowTiers>> instances_;
};

}  // namespace gpuscope
