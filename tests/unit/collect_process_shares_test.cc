// Each process's share of a GPU's SM time from NVML's per-process samples
// (collect/process_shares.h).
#include <gtest/gtest.h>

#include <vector>

#include "collect/process_shares.h"

namespace gpuscope::collect {
namespace {

nvml::ProcessUtilizationSample At(uint32_t pid, uint64_t t_us, uint32_t sm) {
  nvml::ProcessUtilizationSample s;
  s.pid = pid;
  s.timestamp_us = t_us;
  s.sm_percent = sm;
  return s;
}

TEST(ProcessSmShares, SumsEachPidOverThePeriodsSampled) {
  // Four periods 100 ms apart: pid 1 ran 70% of each, pid 2 10% of two of
  // them (it did not run in the others, so NVML listed it only twice).
  const std::vector<nvml::ProcessUtilizationSample> samples = {
      At(1, 1000000, 70), At(2, 1000000, 20), At(1, 1100000, 70),
      At(1, 1200000, 70), At(2, 1200000, 20), At(1, 1300000, 70)};
  const auto shares = ProcessSmShares(samples);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares.at(1), 0.7);
  EXPECT_DOUBLE_EQ(shares.at(2), 0.1);
}

TEST(ProcessSmShares, RepeatedSampleCountsOnce) {
  const std::vector<nvml::ProcessUtilizationSample> samples = {At(1, 5, 60), At(1, 5, 60),
                                                               At(2, 5, 20)};
  const auto shares = ProcessSmShares(samples);
  EXPECT_DOUBLE_EQ(shares.at(1), 0.6);
  EXPECT_DOUBLE_EQ(shares.at(2), 0.2);
}

TEST(ProcessSmShares, PeriodsWithoutAnySampleCountAsIdle) {
  // Samples every 100 ms, then nothing for 400 ms (nobody ran), then one more:
  // 8 periods, 5 of them sampled at 80%.
  const std::vector<nvml::ProcessUtilizationSample> samples = {
      At(1, 0, 80), At(1, 100000, 80), At(1, 200000, 80), At(1, 300000, 80), At(1, 700000, 80)};
  EXPECT_DOUBLE_EQ(ProcessSmShares(samples).at(1), 0.8 * 5 / 8);
}

TEST(ProcessSmShares, EmptyAnswerAndOutOfRangeValues) {
  EXPECT_TRUE(ProcessSmShares({}).empty());
  // A driver's value over 100% is read as 100%.
  const std::vector<nvml::ProcessUtilizationSample> samples = {At(1, 5, 250)};
  EXPECT_DOUBLE_EQ(ProcessSmShares(samples).at(1), 1.0);
}

}  // namespace
}  // namespace gpuscope::collect
