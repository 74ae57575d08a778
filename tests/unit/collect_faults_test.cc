// The sampler under failure (DESIGN principle 6): a lost GPU, a hung call,
// NVML missing at start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "collect/sampler.h"
#include "collect_test_support.h"

namespace gpuscope::collect {
namespace {

using testing::ManualClock;
using testing::ScopedEnv;
using testing::SimControl;
using testing::SimOptions;

TEST(CollectFaultsTest, LostGpuClearsItsSeriesAndReattaches) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  ASSERT_EQ(sampler.SampleOnce()->samples[3].state, GpuState::kOk);
  control.Send("inject 3 lost");
  clock.now += 1;
  SnapshotPtr snap = sampler.SampleOnce();
  const GpuSample& lost = snap->samples[3];
  EXPECT_EQ(lost.state, GpuState::kLost);
  EXPECT_THAT(lost.state_reason, ::testing::HasSubstr("GPU_IS_LOST"));
  EXPECT_TRUE(lost.present.none());
  EXPECT_TRUE(lost.nvlink.empty());
  for (std::size_t i = 0; i < snap->samples.size(); ++i) {
    if (i == 3) continue;
    EXPECT_EQ(snap->samples[i].state, GpuState::kOk) << i;
    EXPECT_TRUE(snap->samples[i].Has(Metric::kPowerUsage)) << i;
  }
  // Retries back off while it stays lost: 1 s, then 2 s.
  clock.now += 1;
  EXPECT_EQ(sampler.SampleOnce()->samples[3].state, GpuState::kLost);
  control.Send("clear 3 lost");
  clock.now += 1;  // before the 2 s backoff ends: not retried yet
  EXPECT_EQ(sampler.SampleOnce()->samples[3].state, GpuState::kLost);
  clock.now += 1.5;
  snap = sampler.SampleOnce();
  EXPECT_EQ(snap->samples[3].state, GpuState::kOk) << snap->samples[3].state_reason;
  EXPECT_TRUE(snap->samples[3].Has(Metric::kPowerUsage));
  EXPECT_TRUE(snap->samples[3].Has(Metric::kEccSbeVolatile));  // re-attach reads every tier
  EXPECT_TRUE(snap->samples[3].Has(Metric::kBusySeconds));
}

// One call failing persistently: its series vanish, and the failure is
// counted by call and NVML return code (gpuscope_nvml_call_errors_total);
// NOT_SUPPORTED never counts. It heals when the fault clears.
TEST(CollectFaultsTest, FailingCallIsCountedByCallAndCode) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  SnapshotPtr snap = sampler.SampleOnce();
  ASSERT_TRUE(snap->samples[2].Has(Metric::kPowerUsage));
  for (const GpuSample& s : snap->samples) EXPECT_TRUE(s.call_errors.empty());
  control.Send("inject 2 fail nvmlDeviceGetPowerUsage 999");
  const std::pair<std::string, std::string> key{"nvmlDeviceGetPowerUsage", "NVML_ERROR_UNKNOWN"};
  for (uint64_t cycle = 1; cycle <= 3; ++cycle) {
    clock.now += 1;
    snap = sampler.SampleOnce();
    const GpuSample& s = snap->samples[2];
    EXPECT_FALSE(s.Has(Metric::kPowerUsage));
    EXPECT_TRUE(s.Has(Metric::kGpuTemp));  // the other calls keep answering
    EXPECT_EQ(s.state, GpuState::kOk);
    ASSERT_EQ(s.call_errors.size(), 1u);
    EXPECT_EQ(s.call_errors.begin()->first, key);
    EXPECT_EQ(s.call_errors.begin()->second, cycle);
    EXPECT_TRUE(snap->samples[1].call_errors.empty());
  }
  control.Send("clear 2 fail");
  clock.now += 1;
  snap = sampler.SampleOnce();
  EXPECT_TRUE(snap->samples[2].Has(Metric::kPowerUsage));
  EXPECT_EQ(snap->samples[2].call_errors.at(key), 3u);  // a counter keeps its value
}

// A GPU already lost at start does not stop the others; it is opened by
// index and described once it answers.
TEST(CollectFaultsTest, GpuLostAtStartIsWatchedAndDescribedLater) {
  const std::string scenario_file = testing::WriteTempFile("lost-at-start.yaml", R"(
seed: 5
gpus:
  - model: h100-sxm
    count: 3
faults:
  - {gpu: 1, at: 0, kind: lost}
)");
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", scenario_file);
  SimControl control;
  ManualClock clock;
  Sampler sampler(SimOptions(), clock.AsClock());
  SnapshotPtr snap = sampler.SampleOnce();
  ASSERT_TRUE(snap->nvml_up) << snap->nvml_error;
  ASSERT_EQ(snap->gpus.size(), 3u);
  EXPECT_EQ(snap->samples[1].state, GpuState::kLost);
  EXPECT_EQ(snap->gpus[1].index, 1u);
  EXPECT_TRUE(snap->gpus[1].uuid.empty());
  EXPECT_EQ(snap->samples[0].state, GpuState::kOk);
  EXPECT_EQ(snap->samples[2].state, GpuState::kOk);
  control.Send("clear 1 lost");
  clock.now += 1;
  snap = sampler.SampleOnce();
  EXPECT_EQ(snap->samples[1].state, GpuState::kOk) << snap->samples[1].state_reason;
  EXPECT_EQ(snap->gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_THAT(snap->gpus[1].uuid, ::testing::StartsWith("GPU-"));
  EXPECT_EQ(snap->samples[1].nvlink.size(), 18u);
}

// A call hanging 5 s on GPU 2's power reading: snapshots keep coming every
// fast interval, GPU 2 is stale with its last values, the others advance;
// when the call returns GPU 2 recovers.
// Polls the latest snapshot until `done` holds or 8 s pass; returns the last.
template <typename Pred>
SnapshotPtr WaitFor(const Sampler& sampler, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  SnapshotPtr snap = sampler.Latest();
  while (!done(*snap) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    snap = sampler.Latest();
  }
  return snap;
}

TEST(CollectFaultsTest, HungCallMarksOnlyThatGpuStale) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  SamplerOptions options = SimOptions();
  options.fast_interval_s = 0.2;
  Sampler sampler(options);
  ASSERT_TRUE(sampler.Open().ok());
  sampler.Start();
  SnapshotPtr first = WaitFor(sampler, [](const Snapshot& s) { return s.samples.size() == 8; });
  ASSERT_EQ(first->samples.size(), 8u);
  ASSERT_EQ(sampler.Latest()->samples[2].state, GpuState::kOk);
  const double power_before = sampler.Latest()->samples[2].Get(Metric::kPowerUsage);
  control.Send("inject 2 hang nvmlDeviceGetPowerUsage 5");
  // Clear the fault only once a call is stuck in it (the sim applies both
  // lines in one poll otherwise); the call already sleeping keeps sleeping.
  SnapshotPtr during =
      WaitFor(sampler, [](const Snapshot& s) { return s.samples[2].state == GpuState::kStale; });
  control.Send("clear 2 hang");
  ASSERT_EQ(during->samples[2].state, GpuState::kStale);
  const auto min_sequence = during->sequence + 3;
  SnapshotPtr later =
      WaitFor(sampler, [&](const Snapshot& s) { return s.sequence >= min_sequence; });
  EXPECT_GE(later->sequence, during->sequence + 3);  // still publishing
  EXPECT_EQ(later->samples[2].state, GpuState::kStale);
  EXPECT_THAT(later->samples[2].state_reason, ::testing::HasSubstr("has not returned"));
  EXPECT_TRUE(later->samples[2].Has(Metric::kPowerUsage));  // last values kept
  EXPECT_NEAR(later->samples[2].Get(Metric::kPowerUsage), power_before, 200);
  EXPECT_EQ(later->samples[2].sampled_at, during->samples[2].sampled_at);
  for (std::size_t i : {0u, 1u, 3u, 7u}) {
    EXPECT_EQ(later->samples[i].state, GpuState::kOk) << i;
    EXPECT_GT(later->samples[i].sampled_at, during->samples[i].sampled_at) << i;
  }
  // The hang ends ~5 s after the call began; then GPU 2 answers again.
  SnapshotPtr after =
      WaitFor(sampler, [](const Snapshot& s) { return s.samples[2].state == GpuState::kOk; });
  EXPECT_EQ(after->samples[2].state, GpuState::kOk) << after->samples[2].state_reason;
  EXPECT_GT(after->samples[2].sampled_at, later->samples[2].sampled_at);
  sampler.Stop();
}

TEST(CollectFaultsTest, MissingLibraryPublishesDownAndRetriesWithBackoff) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ManualClock clock;
  std::atomic<int> attempts{0};
  std::atomic<bool> present{false};
  auto opener = [&]() -> Result<std::unique_ptr<nvml::Library>> {
    ++attempts;
    return nvml::Library::Open(present ? testing::SimLibraryPath()
                                       : "/nonexistent/libnvidia-ml.so.1");
  };
  Sampler sampler(SimOptions(), clock.AsClock(), opener);
  SnapshotPtr snap = sampler.SampleOnce();
  EXPECT_FALSE(snap->nvml_up);
  EXPECT_THAT(snap->nvml_error, ::testing::HasSubstr("not found"));
  EXPECT_TRUE(snap->gpus.empty());
  EXPECT_EQ(attempts, 1);
  clock.now += 0.5;
  sampler.SampleOnce();
  EXPECT_EQ(attempts, 1);  // backoff 1 s
  clock.now += 0.5;
  sampler.SampleOnce();
  EXPECT_EQ(attempts, 2);  // then 2 s
  clock.now += 1;
  sampler.SampleOnce();
  EXPECT_EQ(attempts, 2);
  present = true;
  clock.now += 1;
  snap = sampler.SampleOnce();
  EXPECT_EQ(attempts, 3);
  EXPECT_TRUE(snap->nvml_up) << snap->nvml_error;
  EXPECT_TRUE(snap->nvml_error.empty());
  EXPECT_EQ(snap->gpus.size(), 8u);
  EXPECT_NE(sampler.library(), nullptr);
}

TEST(CollectFaultsTest, DriverNotLoadedIsReportedAndSamplerKeepsRunning) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  ScopedEnv init_error("GPUSCOPE_SIM_INIT_ERROR", "DRIVER_NOT_LOADED");
  SamplerOptions options = SimOptions();
  options.fast_interval_s = 0.1;
  Sampler sampler(options);
  EXPECT_FALSE(sampler.Open().ok());
  sampler.Start();
  WaitFor(sampler, [](const Snapshot& s) { return s.sequence >= 2; });
  sampler.Stop();
  SnapshotPtr snap = sampler.Latest();
  EXPECT_GE(snap->sequence, 2u);
  EXPECT_FALSE(snap->nvml_up);
  EXPECT_THAT(snap->nvml_error, ::testing::HasSubstr("DRIVER_NOT_LOADED"));
  EXPECT_EQ(sampler.library(), nullptr);
}

}  // namespace
}  // namespace gpuscope::collect
