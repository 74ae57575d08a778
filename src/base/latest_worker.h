// A thread that works on the latest value handed to it. Offer() stores the value (replacing one
// not yet taken) and returns at once, so the sampler never waits on slow work: values offered
// while the worker is busy collapse into the newest. After each run the worker may rest for a
// multiple of how long the run took, which bounds its share of a core.
//
// Thread safety: Offer and Stop from any thread; Start not concurrently with Stop. The work runs
// on the worker's thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace gpuscope::base {

template <typename T>
class LatestWorker {
 public:
  // `rest_factor`: after a run that took d, wait d * rest_factor before the next one.
  explicit LatestWorker(std::function<void(T&)> work, double rest_factor = 0)
      : work_(std::move(work)), rest_factor_(rest_factor) {}
  ~LatestWorker() { Stop(); }
  LatestWorker(const LatestWorker&) = delete;
  LatestWorker& operator=(const LatestWorker&) = delete;

  void Start() {
    if (thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stopping_ = false;
    }
    thread_ = std::thread([this] { Loop(); });
  }

  // Idempotent; a value not yet taken is dropped.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // O(1): a lock held for a move.
  void Offer(T value) {
    {
      std::lock_guard lock(mu_);
      pending_ = std::move(value);
    }
    cv_.notify_one();
  }

 private:
  void Loop() {
    for (;;) {
      T value;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
        if (stopping_) return;
        value = std::move(*pending_);
        pending_.reset();
      }
      const auto started = std::chrono::steady_clock::now();
      work_(value);
      if (rest_factor_ <= 0) continue;
      const auto rest = (std::chrono::steady_clock::now() - started) * rest_factor_;
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, rest, [this] { return stopping_; })) return;
    }
  }

  const std::function<void(T&)> work_;
  const double rest_factor_;
  std::mutex mu_;  // pending_, stopping_ (a leaf)
  std::condition_variable cv_;
  std::optional<T> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuscope::base
