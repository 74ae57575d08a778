// The watchdog's clock: a cycle that waits the full watchdog for a hung call
// marks that GPU stale on that very cycle. The wait deadline and the
// staleness check measure from the same instant (when the read was posted),
// so the hang can never come out a hair under the limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

// Waits (wall time) until `gpu` answers again and is back to kOk.
void WaitRecovered(Sampler& sampler, ManualClock& clock, std::size_t gpu) {
  for (int i = 0; i < 50; ++i) {
    clock.now += 0.1;
    if (sampler.SampleOnce()->samples[gpu].state == GpuState::kOk) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL() << "GPU " << gpu << " did not recover";
}

// The cycle reads its clock after noting when it started; a clock that takes
// 30 ms (a loaded machine preempting the cycle between its start and the
// posts does the same) posts every read 30 ms after the cycle start. A
// deadline counted from the cycle start then ended the wait 30 ms short of
// the watchdog as measured from the post, and the hung GPU stayed "ok".
TEST(CollectWatchdogTest, FullWatchdogWaitAlwaysMarksTheHungGpuStale) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  ManualClock clock;
  Clock slow_clock = [&clock] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return clock.now;
  };
  SamplerOptions options = SimOptions();
  options.fast_interval_s = 0.1;
  options.watchdog_s = 0.15;
  Sampler sampler(options, slow_clock);
  ASSERT_EQ(sampler.SampleOnce(true)->samples[7].state, GpuState::kOk);
  for (int round = 0; round < 4; ++round) {
    control.Send("inject 7 hang nvmlDeviceGetPowerUsage 0.4");
    clock.now += 0.1;
    const auto before = std::chrono::steady_clock::now();
    SnapshotPtr snap = sampler.SampleOnce();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    control.Send("clear 7 hang");
    EXPECT_GE(waited, options.watchdog_s) << "round " << round;
    EXPECT_EQ(snap->samples[7].state, GpuState::kStale) << "round " << round;
    EXPECT_THAT(snap->samples[7].state_reason, ::testing::HasSubstr("has not returned"));
    for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(snap->samples[i].state, GpuState::kOk) << i;
    WaitRecovered(sampler, clock, 7);
  }
}

}  // namespace
}  // namespace gpuscope::collect
