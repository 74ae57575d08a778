#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <vector>

#include "base/latest_worker.h"

namespace gpuscope::base {
namespace {

using namespace std::chrono_literals;

TEST(LatestWorker, RunsWhatIsOfferedOnItsThread) {
  std::promise<std::thread::id> ran_on;
  LatestWorker<int> worker([&](int& v) {
    if (v == 7) ran_on.set_value(std::this_thread::get_id());
  });
  worker.Start();
  worker.Offer(7);
  std::future<std::thread::id> ran = ran_on.get_future();
  ASSERT_EQ(ran.wait_for(10s), std::future_status::ready);
  EXPECT_NE(ran.get(), std::this_thread::get_id());
}

TEST(LatestWorker, ValuesOfferedWhileBusyCollapseIntoTheNewest) {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> seen;  // only the worker writes it until Stop joins
  std::promise<void> newest_done;
  LatestWorker<int> worker([&](int& v) {
    seen.push_back(v);
    if (v == 1) {
      entered.set_value();
      released.wait();
    }
    if (v == 4) newest_done.set_value();
  });
  worker.Start();
  worker.Offer(1);
  entered.get_future().wait();
  worker.Offer(2);  // replaced before the worker is free
  worker.Offer(3);
  worker.Offer(4);
  release.set_value();
  ASSERT_EQ(newest_done.get_future().wait_for(10s), std::future_status::ready);
  worker.Stop();
  EXPECT_EQ(seen, (std::vector<int>{1, 4}));
}

TEST(LatestWorker, RestsAMultipleOfTheRunBeforeTheNext) {
  std::vector<std::chrono::steady_clock::time_point> starts;
  std::promise<void> first, second;
  LatestWorker<int> worker(
      [&](int&) {
        starts.push_back(std::chrono::steady_clock::now());
        if (starts.size() == 1) first.set_value();
        if (starts.size() == 2) second.set_value();
        std::this_thread::sleep_for(20ms);
      },
      4);
  worker.Start();
  worker.Offer(1);
  first.get_future().wait();  // the first run is under way
  worker.Offer(2);
  ASSERT_EQ(second.get_future().wait_for(10s), std::future_status::ready);
  worker.Stop();
  // 20 ms of work, then at least 4 x 20 ms of rest.
  EXPECT_GE(starts[1] - starts[0], 100ms);
}

TEST(LatestWorker, StopEndsTheRestAndIsIdempotent) {
  std::atomic<int> runs{0};
  LatestWorker<int> worker(
      [&](int&) {
        runs.fetch_add(1);
        std::this_thread::sleep_for(10ms);
      },
      1e6);  // would rest for hours
  worker.Start();
  worker.Offer(1);
  while (runs.load() == 0) std::this_thread::sleep_for(1ms);
  worker.Offer(2);  // dropped: the worker rests, then stops
  const auto stop_started = std::chrono::steady_clock::now();
  worker.Stop();
  worker.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_started, 5s);
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace gpuscope::base
