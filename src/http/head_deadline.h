// A fixed deadline for receiving a request head (request line and headers), which slowly
// trickled bytes do not extend: libmicrohttpd's own connection timeout restarts on every byte
// received, so a client sending one header line every few seconds (slowloris) would hold a
// connection forever.
//
// Request bodies (POST routes) get a minimum rate instead, for the same reason: a body must
// start arriving within `body_grace`, and each byte received moves its deadline on by
// 1/`min_body_rate` seconds (as Apache's mod_reqtimeout MinRate), but never to more than
// `body_grace` from now, so a body that falls below the rate is cut at most `body_grace` after
// (plus a sweep tick), however many bytes came before; the connection is cut the same way.
//
// The server registers each connection when libmicrohttpd reports it open (its socket is then
// known), marks the head received when the request handler is first called, restarts the
// deadline when a response is done (the next request on a keep-alive connection) and forgets the
// connection when libmicrohttpd reports it closed. A sweeper thread shuts down, with
// shutdown(2), the socket of every connection still waiting for its head past the deadline;
// libmicrohttpd then sees the end of the stream and closes the connection on its own thread.
// shutdown() leaves the descriptor open, and the close notification waits on the same lock as the
// sweep, so the socket swept is always the connection's own.
//
// Thread safety: all methods may be called from any thread; Entry pointers are owned here from
// Open() to Closed().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace gpuscope::http {

class HeadDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  struct Entry;

  // `min_body_rate` 0: no minimum for bodies.
  explicit HeadDeadline(std::chrono::milliseconds timeout,
                        std::chrono::milliseconds body_grace = std::chrono::milliseconds(10000),
                        size_t min_body_rate = 0);
  ~HeadDeadline();  // stops the sweeper; connections still registered are freed
  HeadDeadline(const HeadDeadline&) = delete;
  HeadDeadline& operator=(const HeadDeadline&) = delete;

  // A new connection on socket `fd`: its head is due within the timeout from now.
  Entry* Open(int fd);
  // The request head arrived (null is ignored).
  void HeadReceived(Entry* entry);
  // A request body starts now; `BodyProgress` adds the bytes received; `BodyDone` ends the
  // minimum-rate check (null is ignored by all three).
  void BodyStarted(Entry* entry);
  void BodyProgress(Entry* entry, size_t bytes);
  void BodyDone(Entry* entry);
  // The response is done: the next request head is due within the timeout from now.
  void ResponseDone(Entry* entry);
  // The connection closed: `entry` is freed.
  void Closed(Entry* entry);

  // Connections cut so far for missing their deadline.
  uint64_t expired() const;
  // Connections cut so far for a body slower than the minimum rate.
  uint64_t slow_bodies() const;

 private:
  void Sweep();
  bool TooSlow(const Entry& entry, Clock::time_point now) const;

  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds body_grace_;
  size_t min_body_rate_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_set<Entry*> entries_;
  uint64_t expired_ = 0;
  uint64_t slow_bodies_ = 0;
  bool stopping_ = false;
  std::thread sweeper_;
};

}  // namespace gpuscope::http
