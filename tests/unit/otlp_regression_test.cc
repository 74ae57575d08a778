// The kpi_regression finding: a KPI's recent mean against its earlier level, with the GPU
// findings that coincide, or none.
#include <gtest/gtest.h>

#include "otlp/regression.h"

namespace gpuscope::otlp {
namespace {

KpiReading Step(int rank, double count, double sum) {
  return {Kpi::kStepDuration, "gpuscope_app_step_duration_seconds", rank, "trainer", count, sum};
}

// Ten steps a second on GPUs 2 and 3: 0.2 s each for `slow_from` seconds, then `slow` s.
RegressionTracker Steps(double slow, double slow_from, double until) {
  RegressionTracker tracker({.recent_s = 10, .baseline_s = 60, .min_change = 0.2, .min_count = 5});
  double count = 0, sum = 0;
  for (double t = 0; t <= until; t += 1) {
    count += 10;
    sum += 10 * (t < slow_from ? 0.2 : slow);
    tracker.Update({Step(2, count, sum), Step(3, count, sum)}, t);
  }
  return tracker;
}

TEST(RegressionTest, ASlowerStepNamesTheKpiTheChangeAndTheCoincidingGpuFinding) {
  RegressionTracker tracker = Steps(0.26, 51, 60);
  std::vector<std::vector<std::string>> causes(4);
  causes[2] = {"thermal_throttle"};
  std::vector<KpiFinding> found = tracker.Evaluate(60, causes);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].rank, 2);
  EXPECT_TRUE(found[0].regressed);
  EXPECT_NEAR(found[0].change, 0.3, 1e-9);
  EXPECT_EQ(found[0].verdict,
            "kpi_regression: step_duration of trainer rose 30% (200 ms -> 260 ms, last 10 s "
            "against the 50 s before); coincides with thermal_throttle on this GPU");
  EXPECT_EQ(found[1].rank, 3);
  EXPECT_TRUE(found[1].regressed);
  EXPECT_NE(found[1].verdict.find("no GPU cause found"), std::string::npos) << found[1].verdict;
  std::vector<prom::Family> families = RegressionTracker::Families(found);
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "gpuscope_kpi_regression_active");
  EXPECT_EQ(families[0].samples[0].labels,
            (prom::Labels{
                {"kpi", "step_duration"}, {"workload", "trainer"}, {"cause", "thermal_throttle"}}));
  EXPECT_EQ(families[0].samples[1].labels.back().second, "none");
}

TEST(RegressionTest, SmallChangesAndShortHistoriesAreNoRegression) {
  std::vector<KpiFinding> small = Steps(0.22, 51, 60).Evaluate(60, {});
  ASSERT_EQ(small.size(), 2u);
  EXPECT_FALSE(small[0].regressed);  // +10%
  EXPECT_NE(small[0].verdict.find("within its usual range"), std::string::npos);
  // 15 s of history: the baseline (5 s) is shorter than the recent span (10 s).
  EXPECT_TRUE(Steps(0.4, 10, 15).Evaluate(15, {}).empty());
}

TEST(RegressionTest, ACounterResetRestartsTheHistory) {
  RegressionTracker tracker({.recent_s = 10, .baseline_s = 60, .min_change = 0.2, .min_count = 5});
  for (double t = 0; t <= 30; t += 1) tracker.Update({Step(0, 10 * (t + 1), 2 * (t + 1))}, t);
  tracker.Update({Step(0, 10, 5)}, 31);  // the app restarted
  EXPECT_TRUE(tracker.Evaluate(31, {}).empty());
}

// The recent span is the one asked, however short against the baseline: an 8 s window under a
// 1 h baseline (256 points, ~14 s apart when spread evenly) measured "the last 8 s" as up to
// 22 s and skipped the KPI whenever the baseline was shorter than that, so a step that doubled
// read as a regression on and off.
TEST(RegressionTest, TheRecentSpanIsTheOneAskedUnderALongBaseline) {
  for (auto [recent, asked] : {std::pair{8.0, "last 8 s"}, std::pair{120.0, "last 2 min"}}) {
    RegressionTracker tracker({.recent_s = recent, .baseline_s = 3600});
    const double slow_from = 5 * recent;
    double count = 0, sum = 0;
    for (double t = 0; t <= 9 * recent; t += 0.45) {  // the span's start falls between them
      count += 18;
      sum += 18 * (t < slow_from ? 0.2 : 0.4);
      tracker.Update({Step(2, count, sum)}, t);
      if (t < slow_from + recent) continue;
      std::vector<KpiFinding> found = tracker.Evaluate(t, {});
      ASSERT_EQ(found.size(), 1u) << recent << " s at t=" << t;
      EXPECT_NE(found[0].verdict.find(asked), std::string::npos)
          << "t=" << t << ": " << found[0].verdict;
      EXPECT_NEAR(found[0].recent, 0.4, 0.4 * 0.05) << "t=" << t;
      EXPECT_TRUE(found[0].regressed) << "t=" << t << ": " << found[0].verdict;
    }
  }
}

// Bounded whatever the senders do: the points per key stay under max_points over a long
// history (a step change is still found, over spans as long as asked), and keys beyond
// max_keys are counted, not followed.
TEST(RegressionTest, HistoryIsBoundedPerKeyAndInKeys) {
  RegressionTracker tracker({.recent_s = 120, .baseline_s = 3600, .max_points = 64});
  double count = 0, sum = 0;
  for (double t = 0; t <= 7200; t += 1) {
    count += 10;
    sum += 10 * (t < 7080 ? 0.2 : 0.3);
    tracker.Update({Step(0, count, sum), Step(1, count, sum)}, t);
    ASSERT_LE(tracker.points(), 2u * 64) << t;
  }
  std::vector<KpiFinding> found = tracker.Evaluate(7200, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(found[0].regressed);
  EXPECT_NEAR(found[0].change, 0.5, 0.01);
  // The spans are measured between kept totals: the recent one within a fine step (20 s with
  // 64 points), the baseline within a coarse one (~69 s).
  EXPECT_NE(found[0].verdict.find("last 2 min against the 59 min before"), std::string::npos)
      << found[0].verdict;

  RegressionTracker few({.max_keys = 3});
  std::vector<KpiReading> readings;
  for (int rank = 0; rank < 5; ++rank) readings.push_back(Step(rank, 10, 2));
  few.Update(readings, 0);
  few.Update(readings, 1);
  EXPECT_EQ(few.untracked(), 2u);
  EXPECT_EQ(few.points(), 3u * 2);
}

}  // namespace
}  // namespace gpuscope::otlp
