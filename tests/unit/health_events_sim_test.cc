// The event thread against the simulator build of libnvidia-ml.so.1: faults
// injected through the control file (GPUSCOPE_SIM_CONTROL) arrive as NVML
// events and are counted per GPU and code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "health/events.h"
#include "nvml/library.h"
#include "sim_fixture.h"

namespace gpuscope::health {
namespace {

constexpr const char* kScenario = R"(description: two idle GPUs for the event thread test
gpus:
  - model: h100-sxm
    count: 2
)";

using test_support::ScopedEnv;

template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

class EventsSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Unique per test and process: ctest runs tests in parallel processes.
    const std::string base = ::testing::TempDir() + "/health_events_sim_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                             std::to_string(getpid());
    scenario_ = base + ".yaml";
    control_ = base + ".control";
    std::ofstream(scenario_) << kScenario;
    std::ofstream(control_, std::ios::trunc).flush();
    ScopedEnv s("GPUSCOPE_SIM_SCENARIO", scenario_);
    ScopedEnv c("GPUSCOPE_SIM_CONTROL", control_);
    auto lib = nvml::Library::Open(test_support::SimLibraryPath());
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    library_ = std::move(*lib);
  }
  void TearDown() override {
    library_.reset();
    std::remove(scenario_.c_str());
    std::remove(control_.c_str());
  }
  void Control(const std::string& line) { std::ofstream(control_, std::ios::app) << line << "\n"; }

  std::string scenario_, control_;
  std::unique_ptr<nvml::Library> library_;
};

TEST_F(EventsSimTest, CountsInjectedXidsPerGpuAndCode) {
  EventMonitor::Options options;
  options.wait_timeout_ms = 100;
  auto monitor = EventMonitor::Start(*library_, options);
  ASSERT_TRUE(monitor.ok()) << monitor.status().message();
  EventState s = (*monitor)->State();
  ASSERT_NE(s.Find(0), nullptr);
  EXPECT_TRUE(s.Find(0)->registered_mask & nvml::events::kXidCritical);
  EXPECT_TRUE(s.Find(1)->registered_mask & nvml::events::kDoubleBitEcc);

  Control("inject 1 xid 79");
  Control("inject 0 xid 13");
  Control("inject 0 xid 13");
  Control("inject 0 ecc dbe");  // DBE event + XID 48
  ASSERT_TRUE(Eventually([&] {
    EventState st = (*monitor)->State();
    const GpuEvents* g0 = st.Find(0);
    return g0 && g0->xid_counts.count(13) && g0->xid_counts.at(13) == 2 &&
           g0->xid_counts.count(48) && st.Find(1)->xid_counts.count(79);
  })) << "events did not arrive";
  s = (*monitor)->State();
  EXPECT_EQ(s.Find(1)->xid_counts.at(79), 1u);
  EXPECT_EQ(s.Find(1)->last_xid, 79u);
  EXPECT_EQ(s.Find(0)->dbe_events, 1u);
  EXPECT_EQ(s.Find(0)->WindowCounts().at(13), 2u);
  EXPECT_EQ(s.Find(1)->xid_counts.count(13), 0u);
}

TEST_F(EventsSimTest, KeepsRunningWhenAGpuIsLost) {
  EventMonitor::Options options;
  options.wait_timeout_ms = 100;
  auto monitor = EventMonitor::Start(*library_, options);
  ASSERT_TRUE(monitor.ok()) << monitor.status().message();
  Control("inject 1 lost");
  ASSERT_TRUE(Eventually([&] {
    const EventState st = (*monitor)->State();
    return st.Find(1) && st.Find(1)->unavailable_events > 0;
  })) << "no GpuUnavailable event";
  Control("inject 0 xid 31");
  ASSERT_TRUE(Eventually([&] {
    const EventState st = (*monitor)->State();
    return st.Find(0) && st.Find(0)->xid_counts.count(31);
  })) << "the thread stopped after the GPU was lost";
  EXPECT_TRUE((*monitor)->State().running);
}

}  // namespace
}  // namespace gpuscope::health
