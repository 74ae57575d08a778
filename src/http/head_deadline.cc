#include "http/head_deadline.h"

#include <sys/socket.h>

#include <algorithm>

namespace gpuscope::http {

struct HeadDeadline::Entry {
  int fd;
  Clock::time_point deadline;
  bool waiting;  // for a request head
};

HeadDeadline::HeadDeadline(std::chrono::milliseconds timeout)
    : timeout_(std::max(timeout, std::chrono::milliseconds(1))) {
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

void HeadDeadline::ResponseDone(Entry* entry) {
  if (entry == nullptr) return;
  std::lock_guard lock(mu_);
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
      if (!entry->waiting || entry->deadline > now) continue;
      entry->waiting = false;  // once: libmicrohttpd closes it and calls Closed()
      shutdown(entry->fd, SHUT_RDWR);
      ++expired_;
    }
  }
}

}  // namespace gpuscope::http
