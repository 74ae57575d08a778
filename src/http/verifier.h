// Keeps bcrypt off the HTTP event threads.
//
// VerifierPool: a few worker threads and a bounded queue. The server suspends a connection
// whose credentials are not cached, queues the check here and resumes the connection from the
// worker when it is done; when the queue is full the request is answered 503 at once instead.
//
// FailureLimiter: a token bucket of failed checks per client address. Each check takes a token
// and a successful one gives it back; a client that has spent its burst is answered 429 without
// running bcrypt until tokens refill, so a wrong-password flood costs the server one bcrypt per
// refill interval per address, however many connections it opens. Cached
// (previously verified) credentials never consult it. Its table is bounded: past `max_clients`
// addresses, the ones back at a full bucket are forgotten first.
//
// Thread safety: both classes are safe to use from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace gpuscope::http {

class VerifierPool {
 public:
  // threads: workers (at least 1); queue: jobs waiting at most (running ones not counted).
  VerifierPool(unsigned threads, size_t queue);
  ~VerifierPool();  // finishes queued jobs, then joins
  VerifierPool(const VerifierPool&) = delete;
  VerifierPool& operator=(const VerifierPool&) = delete;

  // Reserves a queue slot; false when the queue is full. A reservation must be followed by
  // exactly one Submit().
  bool Reserve();
  // Queues `job` in a reserved slot; it runs on a worker thread.
  void Submit(std::function<void()> job);

 private:
  void Run();

  size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  size_t reserved_ = 0;  // slots taken by Reserve() and not yet submitted or run
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

class FailureLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // burst: failures allowed at once; refill: one more failure per this interval.
  FailureLimiter(unsigned burst, std::chrono::milliseconds refill, size_t max_clients = 4096);

  // Takes one of `client`'s tokens for a bcrypt check; false (and `retry_after` gets the wait)
  // when none is left. Taking the token before the check bounds concurrent checks too.
  bool TryAcquire(const std::string& client, Clock::time_point now,
                  std::chrono::seconds* retry_after = nullptr);
  // The check succeeded: its token comes back, so only failures are limited.
  void Succeeded(const std::string& client);

 private:
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  double Refilled(const Bucket& bucket, Clock::time_point now) const;
  void Prune(Clock::time_point now);

  unsigned burst_;
  std::chrono::milliseconds refill_;
  size_t max_clients_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace gpuscope::http
