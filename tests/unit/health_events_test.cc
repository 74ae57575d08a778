#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
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

// A storm of 1,000 XIDs/s for 60 s over four codes, mostly repeats: exact
// totals and window counts, and a window that holds entries per second and
// code, not per XID.
TEST(EventTracker, StormKeepsExactCountsInABoundedWindow) {
  EventTracker t(300);
  const unsigned codes[] = {13, 13, 13, 13, 13, 31, 31, 31, 43, 95};  // 10 per 10 ms
  uint64_t sent = 0;
  for (int ms = 0; ms < 60000; ++ms) {
    t.Record(Xid(0, codes[ms % 10]), 1000 + ms / 1000.0);
    ++sent;
  }
  t.Expire(1060);
  const GpuEvents* g = t.state().Find(0);
  EXPECT_EQ(sent, 60000u);
  EXPECT_EQ(g->xid_counts.at(13), 30000u);
  EXPECT_EQ(g->xid_counts.at(31), 18000u);
  EXPECT_EQ(g->xid_counts.at(43), 6000u);
  EXPECT_EQ(g->xid_counts.at(95), 6000u);
  const auto window = g->WindowCounts();
  EXPECT_EQ(window.at(13), 30000u);
  EXPECT_EQ(window.at(95), 6000u);
  EXPECT_LE(g->recent.size(), 60u * 4);            // one entry per second and code
  EXPECT_EQ(g->WindowCounts(1030).at(31), 9000u);  // seconds 1030..1059
  t.Expire(1000 + 300 + 30.5);                     // drops seconds 1000..1029
  EXPECT_EQ(t.state().Find(0)->WindowCounts().at(31), 9000u);
}

TEST(XidLogLimiter, OneLinePerGpuAndXidPerIntervalWithTheCountSince) {
  XidLogLimiter limiter(60);
  std::vector<std::string> lines;
  std::map<unsigned, uint64_t> sent;
  for (int ms = 0; ms < 150000; ++ms) {  // 1,000/s on GPU 0 for 150 s
    const unsigned xid = ms % 4 == 0 ? 31 : 13;
    ++sent[xid];
    if (auto line = limiter.Observe(0, xid, 1000 + ms / 1000.0); !line.empty()) {
      lines.push_back(line);
    }
  }
  ASSERT_FALSE(limiter.Observe(1, 13, 1150).empty());            // another GPU has its own line
  for (auto& line : limiter.Flush(1149)) lines.push_back(line);  // not an interval yet
  EXPECT_EQ(lines.size(), 6u);                                   // per code: at 0, 60 and 120 s
  for (auto& line : limiter.Flush(1200)) lines.push_back(line);
  EXPECT_EQ(lines.size(), 8u);  // and what came after 120 s
  EXPECT_TRUE(limiter.Flush(1300).empty());
  // The counts add up to what was sent.
  std::map<unsigned, uint64_t> logged;
  for (const std::string& line : lines) {
    unsigned xid = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "XID %u on GPU 0", &xid), 1) << line;
    const auto colon = line.find("): ");
    logged[xid] += colon == std::string::npos ? 1 : std::stoull(line.substr(colon + 3));
  }
  EXPECT_EQ(logged, sent);
  EXPECT_EQ(lines[0], "XID 31 on GPU 0 (MMU fault)");
  EXPECT_NE(lines.back().find("since the last line 80 s ago"), std::string::npos) << lines.back();
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

TEST(EventMonitor, LogsAStormOncePerIntervalNotPerEvent) {
  auto source = std::make_unique<FakeSource>();
  for (int i = 0; i < 5000; ++i) source->Push(std::optional<nvml::Event>(Xid(2, 95)));
  EventMonitor::Options options;
  options.wait_timeout_ms = 5;
  options.xid_log_interval_seconds = 60;
  std::atomic<double> now{100};
  options.clock = [&now] { return now.load(); };
  std::mutex mu;
  std::vector<std::string> lines;
  options.log_line = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  auto monitor = EventMonitor::StartWith(std::move(source), {{2, 0xF}}, options);
  ASSERT_TRUE(Eventually([&] {
    const EventState s = monitor->State();
    return s.Find(2)->xid_counts.count(95) && s.Find(2)->xid_counts.at(95) == 5000;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].rfind("XID 95 on GPU 2 (", 0), 0u) << lines[0];
  }
  now = 161;  // the interval passed: the XIDs counted since are reported once
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return lines.size() == 2;
  }));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_NE(lines[1].find(": 4999 since the last line 61 s ago"), std::string::npos) << lines[1];
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
