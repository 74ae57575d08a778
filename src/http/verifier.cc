#include "http/verifier.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::http {

VerifierPool::VerifierPool(unsigned threads, size_t queue) : capacity_(std::max<size_t>(queue, 1)) {
  for (unsigned i = 0; i < std::max(threads, 1u); ++i) workers_.emplace_back([this] { Run(); });
}

VerifierPool::~VerifierPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool VerifierPool::Reserve() {
  std::lock_guard lock(mu_);
  if (reserved_ >= capacity_) return false;
  ++reserved_;
  return true;
}

void VerifierPool::Submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void VerifierPool::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    --reserved_;
    lock.unlock();
    job();
    lock.lock();
  }
}

FailureLimiter::FailureLimiter(unsigned burst, std::chrono::milliseconds refill, size_t max_clients)
    : burst_(std::max(burst, 1u)),
      refill_(std::max(refill, std::chrono::milliseconds(1))),
      max_clients_(std::max<size_t>(max_clients, 1)) {}

double FailureLimiter::Refilled(const Bucket& bucket, Clock::time_point now) const {
  double elapsed = std::chrono::duration<double, std::milli>(now - bucket.updated).count();
  double gained = std::max(0.0, elapsed) / static_cast<double>(refill_.count());
  return std::min(static_cast<double>(burst_), bucket.tokens + gained);
}

bool FailureLimiter::TryAcquire(const std::string& client, Clock::time_point now,
                                std::chrono::seconds* retry_after) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_clients_) Prune(now);
    it = buckets_.emplace(client, Bucket{static_cast<double>(burst_), now}).first;
  }
  double tokens = Refilled(it->second, now);
  it->second.updated = now;
  if (tokens >= 1.0) {
    it->second.tokens = tokens - 1.0;
    return true;
  }
  it->second.tokens = tokens;
  if (retry_after != nullptr) {
    double wait_ms = (1.0 - tokens) * static_cast<double>(refill_.count());
    *retry_after = std::chrono::seconds(static_cast<long>(std::ceil(wait_ms / 1000.0)));
  }
  return false;
}

void FailureLimiter::Succeeded(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(client);
  if (it != buckets_.end()) {
    it->second.tokens = std::min(static_cast<double>(burst_), it->second.tokens + 1.0);
  }
}

void FailureLimiter::Prune(Clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    it = Refilled(it->second, now) >= burst_ ? buckets_.erase(it) : std::next(it);
  }
  // Every address is still limited: forget one, rather than grow without bound.
  if (buckets_.size() >= max_clients_) buckets_.erase(buckets_.begin());
}

}  // namespace gpuscope::http
