#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "health/events.h"

namespace gpuscope::health {
namespace {

nvml::Event Xid(unsigned gpu, unsigned xid) {
  nvml::Event e;
  e.device_index = gpu;
  e.type = nvml::events::kXidCritical;
  e.data = xid;
  return e;
}

nvml::Event Typed(unsigned gpu, uint64_t type, uint64_t data = 0) {
  nvml::Event e;
  e.device_index = gpu;
  e.type = type;
  e.data = data;
  return e;
}

TEST(EventTracker, CountsXidsPerGpuAndCode) {
  EventTracker t(300);
  t.Registered(0, 0xF);
  t.Record(Xid(0, 13), 100);
  t.Record(Xid(0, 13), 101);
  t.Record(Xid(1, 79), 102);
  t.Record(Xid(0, 999), 103);  // unknown to NVML: counted like any code
  const EventState& s = t.state();
  EXPECT_EQ(s.Find(0)->xid_counts.at(13), 2u);
  EXPECT_EQ(s.Find(0)->xid_counts.at(999), 1u);
  EXPECT_EQ(s.Find(0)->last_xid, 999u);
  EXPECT_EQ(s.Find(0)->registered_mask, 0xFu);
  EXPECT_EQ(s.Find(1)->xid_counts.at(79), 1u);
  EXPECT_EQ(s.Find(1)->last_xid_time, 102);
  EXPECT_EQ(s.Find(2), nullptr);
}

TEST(EventTracker, SlidingWindowExpires) {
  EventTracker t(300);
  t.Record(Xid(0, 13), 1000);
  t.Record(Xid(0, 31), 1200);
  t.Record(Xid(0, 13), 1250);
  EXPECT_EQ(t.state().Find(0)->WindowCounts().at(13), 2u);
  t.Expire(1301);  // drops the XID at 1000
  auto w = t.state().Find(0)->WindowCounts();
  EXPECT_EQ(w.at(13), 1u);
  EXPECT_EQ(w.at(31), 1u);
  t.Expire(1600);
  EXPECT_TRUE(t.state().Find(0)->WindowCounts().empty());
  EXPECT_EQ(t.state().Find(0)->xid_counts.at(13), 2u);  // totals are forever
}

TEST(EventTracker, EccUnavailableAndRecoveryEvents) {
  EventTracker t;
  t.Record(Typed(0, nvml::events::kSingleBitEcc), 1);
  t.Record(Typed(0, nvml::events::kDoubleBitEcc), 2);
  t.Record(Typed(0, nvml::events::kDoubleBitEcc), 3);
  t.Record(Typed(0, nvml::events::kGpuUnavailable), 4);
  t.Record(Typed(0, nvml::events::kGpuRecoveryAction, 2), 5);
  t.Record(Typed(0, nvml::events::kPState), 6);  // not ours: ignored
  const GpuEvents* g = t.state().Find(0);
  EXPECT_EQ(g->sbe_events, 1u);
  EXPECT_EQ(g->dbe_events, 2u);
  EXPECT_EQ(g->unavailable_events, 1u);
  EXPECT_EQ(g->last_unavailable_time, 4);
  EXPECT_EQ(g->last_recovery_action, 2u);
  EXPECT_TRUE(g->xid_counts.empty());
}

// Hands out queued events, then errors or timeouts; counts calls.
class FakeSource : public EventSource {
 public:
  void Push(Result<std::optional<nvml::Event>> r) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
  }
  Result<std::optional<nvml::Event>> Wait(unsigned timeout_ms) override {
    ++calls;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!queue_.empty()) {
        auto r = std::move(queue_.front());
        queue_.pop_front();
        return r;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 20u)));
    return std::optional<nvml::Event>();
  }
  std::atomic<int> calls{0};

 private:
  std::mutex mu_;
  std::deque<Result<std::optional<nvml::Event>>> queue_;
};

// Polls until pred holds or ~5 s pass.
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST(EventMonitor, CountsEventsAndSurvivesErrors) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* fake = source.get();
  fake->Push(std::optional<nvml::Event>(Xid(0, 79)));
  fake->Push(Status::Unavailable("nvmlEventSetWait_v2: GPU is lost (NVML_ERROR_GPU_IS_LOST)"));
  fake->Push(std::optional<nvml::Event>(Xid(1, 13)));
  fake->Push(std::optional<nvml::Event>(Xid(1, 13)));
  EventMonitor::Options options;
  options.wait_timeout_ms = 20;
  double now = 5000;
  options.clock = [&now] { return now; };
  auto monitor = EventMonitor::StartWith(std::move(source), {{0, 0xF}, {1, 0xF}}, options);
  ASSERT_TRUE(Eventually([&] {
    EventState s = monitor->State();
    return s.Find(1) && s.Find(1)->xid_counts.count(13) && s.Find(1)->xid_counts.at(13) == 2;
  }));
  EventState s = monitor->State();
  EXPECT_TRUE(s.running);
  EXPECT_EQ(s.Find(0)->xid_counts.at(79), 1u);
  EXPECT_EQ(s.wait_errors, 1u);
  EXPECT_NE(s.error.find("GPU is lost"), std::string::npos);
  EXPECT_EQ(s.Find(0)->registered_mask, 0xFu);
  EXPECT_EQ(s.window_seconds, kDefaultXidWindowSeconds);
  monitor->Stop();
  EXPECT_FALSE(monitor->State().running);
  const int calls = fake->calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fake->calls, calls);  // the thread is gone
}

TEST(EventMonitor, StateExpiresTheWindowAtReadTime) {
  auto source = std::make_unique<FakeSource>();
  source->Push(std::optional<nvml::Event>(Xid(0, 48)));
  EventMonitor::Options options;
  options.wait_timeout_ms = 10;
  options.xid_window_seconds = 60;
  std::atomic<double> now{100};
  options.clock = [&now] { return now.load(); };
  auto monitor = EventMonitor::StartWith(std::move(source), {{0, 0xF}}, options);
  ASSERT_TRUE(Eventually([&] { return !monitor->State().Find(0)->xid_counts.empty(); }));
  EXPECT_EQ(monitor->State().Find(0)->WindowCounts().at(48), 1u);
  now = 161;
  EXPECT_TRUE(monitor->State().Find(0)->WindowCounts().empty());
  EXPECT_EQ(monitor->State().Find(0)->xid_counts.at(48), 1u);
}

TEST(EventMonitor, StopReturnsPromptlyFromABlockingWait) {
  // A source that blocks for the whole timeout, as NVML does.
  class Blocking : public EventSource {
   public:
    Result<std::optional<nvml::Event>> Wait(unsigned timeout_ms) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      return std::optional<nvml::Event>();
    }
  };
  EventMonitor::Options options;
  options.wait_timeout_ms = 50;
  auto monitor = EventMonitor::StartWith(std::make_unique<Blocking>(), {}, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  monitor.reset();  // joins; must not hang
  SUCCEED();
}

}  // namespace
}  // namespace gpuscope::health
