// The trailing window's tiers: memory bounded at any cadence, buckets that
// keep means, extremes, counters and bitmasks, and points that say how long
// they stand for.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuscope/window.h"

namespace gpuscope {
namespace {

using enum Metric;

WindowPoint Sample(double t, double util, double counter = 0, double reasons = 0) {
  WindowPoint p;
  p.t = t;
  auto set = [&p](Metric m, double v) {
    p.values[Index(m)] = static_cast<float>(v);
    p.present.set(Index(m));
  };
  set(kGpuUtil, util);
  set(kEnergyConsumption, counter);  // a counter
  set(kClockReasons, reasons);       // a bitmask
  set(kMemoryTotal, 80);             // constant
  return p;
}

// Points held after 20 minutes at `interval` seconds with default options.
std::size_t HeldAfter(double interval) {
  Window window(Window::Options{600, interval});
  const int n = static_cast<int>(std::lround(1200 / interval));
  for (int i = 0; i <= n; ++i) window.Append(0, Sample(1e6 + i * interval, i % 100));
  EXPECT_EQ(window.Points(0).size(), window.HeldPoints(0));
  return window.HeldPoints(0);
}

TEST(CollectWindowTiers, MemoryBoundedIndependentOfCadence) {
  const std::size_t at_100ms = HeldAfter(0.1), at_1s = HeldAfter(1), at_5s = HeldAfter(5);
  // 60 recent points, at most 60 one-second and 30 twenty-second buckets,
  // and one open bucket per level (a full-resolution 10 minutes would be
  // 6,000 points at 100 ms).
  constexpr std::size_t kBound = 60 + 60 + 30 + 2;
  EXPECT_LE(at_100ms, kBound);
  EXPECT_LE(at_1s, kBound);
  EXPECT_LE(at_5s, kBound);
  EXPECT_GE(at_100ms, 60u + 50 + 25);  // 1 s buckets from 6 s old to 60 s
  EXPECT_GE(at_1s, 60u + 25);          // recent points cover the last minute at 1 s
}

TEST(CollectWindowTiers, SpanAndOrderKeptAcrossTiers) {
  Window window(Window::Options{600, 0.1});
  for (int i = 0; i <= 9000; ++i) window.Append(0, Sample(i * 0.1, 50));
  const std::vector<WindowPoint> points = window.Points(0);
  ASSERT_FALSE(points.empty());
  EXPECT_GE(points.front().t, 900 - 600 - 1e-6);
  EXPECT_LE(points.front().t, 900 - 580 + 1e-6);  // the oldest 20 s bucket
  EXPECT_NEAR(points.back().t, 900, 1e-6);
  double covered = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i) {
      EXPECT_GT(points[i].t, points[i - 1].t);
    }
    if (i + 1 < points.size()) {
      // Each point stands exactly until the next one.
      EXPECT_NEAR(points[i].t + points[i].seconds, points[i + 1].t, 1e-3) << i;
    }
    covered += points[i].seconds;
  }
  EXPECT_NEAR(covered, 900 - points.front().t + 0.1, 1e-2);
  EXPECT_EQ(window.Points(0, 898.95).size(), 11u);  // since: recent points only
}

TEST(CollectWindowTiers, BucketsKeepMeanExtremesCountersAndBits) {
  Window::Options o{1000, 1};
  o.recent_points = 2;
  o.levels = {{10, 1000}};
  Window window(o);
  // 0, 100, 0, 100... each second; energy grows 5 per second; reason bit
  // 0x4 in every sample, 0x40 in the odd ones.
  for (int i = 0; i < 25; ++i) {
    window.Append(0, Sample(i, i % 2 ? 100 : 0, 5.0 * i, i % 2 ? 0x44 : 0x4));
  }
  const std::vector<WindowPoint> points = window.Points(0);
  ASSERT_EQ(points.size(), 2u + 2 + 1);  // [0, 10), [10, 20), [20, 22] open, 23, 24
  const WindowPoint& b = points[0];
  EXPECT_EQ(b.t, 0);
  EXPECT_EQ(b.seconds, 10);
  EXPECT_EQ(b.samples, 10u);
  EXPECT_FLOAT_EQ(b.Get(kGpuUtil), 50);
  EXPECT_FLOAT_EQ(b.Min(kGpuUtil), 0);
  EXPECT_FLOAT_EQ(b.Max(kGpuUtil), 100);
  EXPECT_NEAR(b.Stddev(kGpuUtil), 50, 1e-3);
  EXPECT_FLOAT_EQ(b.Get(kEnergyConsumption), 0);  // its value at t
  EXPECT_FLOAT_EQ(points[1].Get(kEnergyConsumption), 50);
  EXPECT_FLOAT_EQ(b.Get(kClockReasons), 0x44);  // the OR
  EXPECT_FLOAT_EQ(b.Min(kClockReasons), 0x4);   // the AND
  EXPECT_EQ(b.BitTimeShare(kClockReasons, 2), 1);
  EXPECT_NEAR(b.BitTimeShare(kClockReasons, 6), 0.5, 1e-6);
  EXPECT_EQ(b.BitTimeShare(kClockReasons, 7), 0);
  EXPECT_FLOAT_EQ(b.Get(kMemoryTotal), 80);
  EXPECT_EQ(b.Stddev(kMemoryTotal), 0);
  EXPECT_EQ(b.spreads.size(), 2u);  // only what varied: util and the bits
  EXPECT_EQ(points[2].t, 20);       // the open bucket, three samples so far
  EXPECT_EQ(points[2].samples, 3u);
  EXPECT_FLOAT_EQ(points[2].Get(kGpuUtil), 100.0f / 3);
  EXPECT_EQ(points[3].samples, 1u);  // recent samples
  EXPECT_EQ(points[3].seconds, 1);
}

TEST(CollectWindowTiers, CoarserLevelsPoolFinerBuckets) {
  Window::Options o{1000, 0.5};
  o.recent_points = 2;
  o.levels = {{1, 5}, {10, 1000}};
  Window window(o);
  // Two samples a second: 0 and 100, so each 1 s bucket has mean 50 and
  // spread 50; pooled into 10 s buckets the spread must stay 50.
  for (int i = 0; i < 100; ++i) window.Append(0, Sample(i * 0.5, i % 2 ? 100 : 0));
  const std::vector<WindowPoint> points = window.Points(0);
  ASSERT_GT(points.size(), 3u);
  EXPECT_EQ(points[0].samples, 20u);
  EXPECT_EQ(points[0].seconds, 10);
  EXPECT_FLOAT_EQ(points[0].Get(kGpuUtil), 50);
  EXPECT_NEAR(points[0].Stddev(kGpuUtil), 50, 1e-3);
  EXPECT_FLOAT_EQ(points[0].Max(kGpuUtil), 100);
}

TEST(CollectWindowTiers, FrozenTimeKeepsTwoPoints) {
  Window window(Window::Options{600, 0.1});
  for (int i = 0; i < 50; ++i) window.Append(0, Sample(120, i));
  const std::vector<WindowPoint> points = window.Points(0);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].Get(kGpuUtil), 49);  // newest values win
}

}  // namespace
}  // namespace gpuscope
