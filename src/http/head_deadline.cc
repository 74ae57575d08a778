#include "http/head_deadline.h"

#include <sys/socket.h>

#include <algorithm>

namespace gpuscope::http {

struct HeadDeadline::Entry {
  int fd;
  Clock::time_point deadline;
  bool waiting;       // for a request head
  bool body = false;  // receiving a request body
  Clock::time_point body_deadline{};
};

HeadDeadline::HeadDeadline(std::chrono::milliseconds timeout, std::chrono::milliseconds body_grace,
                           size_t min_body_rate)
    : timeout_(std::max(timeout, std::chrono::milliseconds(1))),
      body_grace_(body_grace),
      min_body_rate_(min_body_rate) {
  sweeper_ = std::thread([this] { Sweep(); });
}

HeadDeadline::~HeadDeadline() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  sweeper_.join();
  for (Entry* entry : entries_) delete entry;
}

HeadDeadline::Entry* HeadDeadline::Open(int fd) {
  auto* entry = new Entry{fd, Clock::now() + timeout_, true};
  {
    std::lock_guard lock(mu_);
    entries_.insert(entry);
  }
  cv_.notify_all();  // the sweeper sleeps without a deadline while there are no connections
  return entry;
}

void HeadDeadline::HeadReceived(Entry* entry) {
  if (entry == nullptr) return;
  std::lock_guard lock(mu_);
  entry->waiting = false;
}

void HeadDeadline::BodyStarted(Entry* entry) {
  if (entry == nullptr || min_body_rate_ == 0) return;
  std::lock_guard lock(mu_);
  entry->body = true;
  entry->body_deadline = Clock::now() + body_grace_;
}

// Each byte buys 1/min_body_rate seconds, but the deadline never runs more than the grace
// ahead of now: bytes sent early are no credit for a stall later (4 MiB at once bought 17
// minutes of trickling before).
void HeadDeadline::BodyProgress(Entry* entry, size_t bytes) {
  if (entry == nullptr || min_body_rate_ == 0) return;
  const auto earned = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
      static_cast<double>(bytes) / static_cast<double>(min_body_rate_)));
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mu_);
  entry->body_deadline = std::min(entry->body_deadline + earned, now + body_grace_);
}

void HeadDeadline::BodyDone(Entry* entry) {
  if (entry == nullptr) return;
  std::lock_guard lock(mu_);
  entry->body = false;
}

void HeadDeadline::ResponseDone(Entry* entry) {
  if (entry == nullptr) return;
  std::lock_guard lock(mu_);
  entry->body = false;
  entry->waiting = true;
  entry->deadline = Clock::now() + timeout_;
}

void HeadDeadline::Closed(Entry* entry) {
  if (entry == nullptr) return;
  std::lock_guard lock(mu_);
  entries_.erase(entry);
  delete entry;
}

uint64_t HeadDeadline::expired() const {
  std::lock_guard lock(mu_);
  return expired_;
}

uint64_t HeadDeadline::slow_bodies() const {
  std::lock_guard lock(mu_);
  return slow_bodies_;
}

bool HeadDeadline::TooSlow(const Entry& entry, Clock::time_point now) const {
  return entry.body && now > entry.body_deadline;
}

void HeadDeadline::Sweep() {
  // A deadline is met within a tenth of the timeout (at most 250 ms) of its time.
  auto tick =
      std::clamp(timeout_ / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (entries_.empty()) {
      cv_.wait(lock, [this] { return stopping_ || !entries_.empty(); });
      continue;
    }
    cv_.wait_for(lock, tick, [this] { return stopping_; });
    Clock::time_point now = Clock::now();
    for (Entry* entry : entries_) {
      if (TooSlow(*entry, now)) {
        entry->body = false;  // once, as below
        shutdown(entry->fd, SHUT_RDWR);
        ++slow_bodies_;
        continue;
      }
      if (!entry->waiting || entry->deadline > now) continue;
      entry->waiting = false;  // once: libmicrohttpd closes it and calls Closed()
      shutdown(entry->fd, SHUT_RDWR);
      ++expired_;
    }
  }
}

}  // namespace gpuscope::http
