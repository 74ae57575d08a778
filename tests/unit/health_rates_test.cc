#include <gtest/gtest.h>

#include <optional>

#include "health/rates.h"

namespace gpuscope::health {
namespace {

TEST(PcieReplayLimit, PerGenerationTimesLanesRoundedUp) {
  EXPECT_EQ(PcieReplayLimitPerMinute(1, 16), 3);   // 0.15 x 16 = 2.4
  EXPECT_EQ(PcieReplayLimitPerMinute(2, 16), 5);   // 0.3 x 16 = 4.8
  EXPECT_EQ(PcieReplayLimitPerMinute(3, 16), 8);   // 0.48 x 16 = 7.68
  EXPECT_EQ(PcieReplayLimitPerMinute(4, 16), 16);  // 0.96 x 16 = 15.36
  EXPECT_EQ(PcieReplayLimitPerMinute(5, 16), 31);  // 1.92 x 16 = 30.72
  EXPECT_EQ(PcieReplayLimitPerMinute(6, 16), 62);  // 3.84 x 16 = 61.44
  EXPECT_EQ(PcieReplayLimitPerMinute(3, 8), 4);    // 0.48 x 8 = 3.84
  EXPECT_EQ(PcieReplayLimitPerMinute(2, 10), 3);   // 0.3 x 10 = 3 exactly, not 4
  EXPECT_EQ(PcieReplayLimitPerMinute(1, 1), 1);
}

TEST(PcieReplayLimit, UnknownGenerationOrNoLanes) {
  EXPECT_FALSE(PcieReplayLimitPerMinute(0, 16));
  EXPECT_FALSE(PcieReplayLimitPerMinute(7, 16));
  EXPECT_FALSE(PcieReplayLimitPerMinute(4, 0));
  EXPECT_EQ(PcieReplayRatePerLane(4), 0.96);
}

TEST(CounterRate, NeedsMinimumSpan) {
  CounterRate r;
  EXPECT_FALSE(r.Observe(100, 10, 60, 5));
  EXPECT_FALSE(r.Observe(103, 13, 60, 5));
  auto rate = r.Observe(110, 30, 60, 5);
  ASSERT_TRUE(rate);
  EXPECT_DOUBLE_EQ(*rate, 2.0);  // 20 over 10 s
}

TEST(CounterRate, SpansAboutTheWindow) {
  CounterRate r;
  for (int t = 0; t <= 200; t += 10) r.Observe(t, t < 100 ? 0 : (t - 100) * 10.0, 60, 5);
  // At t=200 the anchor is t=140 (value 400); now 1000: 600 / 60 s.
  EXPECT_NEAR(r.span(), 60, 1e-9);
  auto rate = r.Observe(210, 1100, 60, 5);
  ASSERT_TRUE(rate);
  EXPECT_DOUBLE_EQ(*rate, 10.0);
}

TEST(CounterRate, HistoryIsBoundedAtAFastCadence) {
  CounterRate r;
  std::optional<double> rate;
  for (int i = 0; i <= 6000; ++i) rate = r.Observe(i * 0.1, i * 5.0, 60, 5);  // 50/s, 10 Hz
  EXPECT_LE(r.held(), CounterRate::kMaxPoints + 3);  // the anchor, the newest, rounding
  ASSERT_TRUE(rate);
  EXPECT_NEAR(*rate, 50.0, 1e-9);
  EXPECT_GE(r.span(), 60 - 1e-9);
  EXPECT_LE(r.span(), 60 + 60 / CounterRate::kMaxPoints + 1e-9);
}

TEST(CounterRate, CounterResetRestarts) {
  CounterRate r;
  r.Observe(0, 100, 60, 5);
  EXPECT_TRUE(r.Observe(10, 200, 60, 5));
  EXPECT_FALSE(r.Observe(20, 5, 60, 5));  // GPU reset cleared the counter
  EXPECT_DOUBLE_EQ(*r.Observe(30, 15, 60, 5), 1.0);
}

}  // namespace
}  // namespace gpuscope::health
