// The event thread: waits on an NVML event set (XID critical errors, single-
// and double-bit ECC, GPU unavailable, GPU recovery action; each GPU's mask is
// cut to what it supports) and keeps per-GPU counts: XIDs by code since start,
// the last XID, a sliding window of recent XIDs (dcgm-exporter's
// -x/--xid-count-window-size, default 300000 ms), ECC and other event counts.
//
// XID storms (a GPU repeating a few codes thousands of times a second): the
// window keeps one entry per (second, code), not one per XID, so its memory
// is bounded by window x distinct codes whatever the rate; the totals stay
// exact. The log gets one line per (GPU, XID) per log interval with the count
// of the XIDs since its last line (XidLogLimiter), not a line per event.
//
// EventTracker is the pure bookkeeping (no thread, no NVML) that tests drive
// directly; EventMonitor owns the thread and a tracker behind a mutex. The
// thread waits at most wait_timeout_ms per call so Stop() returns promptly;
// a failing wait (a lost GPU, a driver error) is recorded and retried after a
// short pause, never fatal. Unknown XID codes are counted like any other.
//
// Thread safety: EventTracker is not synchronized. EventMonitor's public
// methods may be called from any thread; State() returns a copy. The
// nvml::Library passed to Start must outlive the monitor.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuscope/status.h"
#include "nvml/events.h"

namespace gpuscope::health {

inline constexpr double kDefaultXidWindowSeconds = 300;  // dcgm-exporter's 300000 ms

// `count` XIDs of one code within one whole second; `time` is the latest.
struct XidOccurrence {
  double time = 0;  // unix seconds
  unsigned xid = 0;
  uint64_t count = 1;
};

// What the events said about one GPU.
struct GpuEvents {
  uint64_t registered_mask = 0;             // event types registered (nvml::events bits)
  std::map<unsigned, uint64_t> xid_counts;  // XID code -> count since start
  std::optional<unsigned> last_xid;         // DCGM_FI_DEV_XID_ERRORS
  double last_xid_time = 0;
  std::deque<XidOccurrence> recent;         // within the window, oldest second first
  uint64_t sbe_events = 0, dbe_events = 0;  // ECC error events since start
  uint64_t unavailable_events = 0;          // GpuUnavailableError events
  double last_unavailable_time = 0;
  uint64_t recovery_action_events = 0;
  std::optional<uint64_t> last_recovery_action;  // the event's data

  // XID code -> occurrences in `recent`; with `since`, only those at or
  // after that time (a window shorter than the monitor's).
  std::map<unsigned, uint64_t> WindowCounts(double since = -1e300) const;
};

struct EventState {
  double window_seconds = kDefaultXidWindowSeconds;
  bool running = false;  // a thread is waiting on events
  std::string error;     // last registration or wait error; empty when none
  uint64_t wait_errors = 0;
  bool last_wait_ok = true;            // the last wait returned (an event or a timeout)
  std::map<unsigned, GpuEvents> gpus;  // by NVML index

  // nullptr when the GPU has no entry (not registered, no event seen).
  const GpuEvents* Find(unsigned gpu) const;
};

class EventTracker {
 public:
  explicit EventTracker(double window_seconds = kDefaultXidWindowSeconds);

  void Registered(unsigned gpu, uint64_t mask);
  // Counts one event observed at `now` (unix seconds).
  void Record(const nvml::Event& event, double now);
  // Drops XIDs older than now - window from every GPU's `recent`.
  void Expire(double now);
  void SetError(std::string error);
  // Notes a failed wait (counted in wait_errors).
  void WaitFailed(std::string error);
  // Notes a wait that returned (an event or a timeout).
  void WaitSucceeded() { state_.last_wait_ok = true; }
  void SetRunning(bool running) { state_.running = running; }

  const EventState& state() const { return state_; }

 private:
  EventState state_;
};

inline constexpr double kDefaultXidLogIntervalSeconds = 60;

// One log line per (GPU, XID) per interval: the first XID of a code on a GPU
// is logged at once; later ones within the interval are only counted, and the
// first line after it (the next XID's, or Flush's when the XIDs stopped) says
// how many came since the last line. The counts of a code's lines add up to
// its total.
class XidLogLimiter {
 public:
  explicit XidLogLimiter(double interval_s = kDefaultXidLogIntervalSeconds)
      : interval_s_(interval_s) {}
  // The line to log for this XID at `now`, or "" when it is only counted.
  std::string Observe(unsigned gpu, unsigned xid, double now);
  // The lines of the codes whose interval passed with XIDs counted.
  std::vector<std::string> Flush(double now);

 private:
  struct Entry {
    double last_line = 0;     // when its last line was logged
    uint64_t suppressed = 0;  // XIDs counted since
  };
  std::string Line(unsigned gpu, unsigned xid, const Entry& e, uint64_t count, double now) const;

  double interval_s_;
  std::map<std::pair<unsigned, unsigned>, Entry> entries_;  // (GPU, XID)
};

// Where events come from: nvml::EventSet in production, a fake in tests.
class EventSource {
 public:
  virtual ~EventSource() = default;
  // The next event, nullopt after timeout_ms without one.
  virtual Result<std::optional<nvml::Event>> Wait(unsigned timeout_ms) = 0;
};

class EventMonitor {
 public:
  struct Options {
    unsigned wait_timeout_ms = 500;
    double xid_window_seconds = kDefaultXidWindowSeconds;
    std::function<double()> clock;  // unix seconds; default: the system clock
    double xid_log_interval_seconds = kDefaultXidLogIntervalSeconds;
    // Where XID log lines go; default: the log at warning level.
    std::function<void(const std::string&)> log_line;
  };

  // Creates an event set on `library`, registers every whole GPU in `gpus`
  // (MIG devices are skipped: events are per GPU) with nvml::events::kHealth
  // masked by what each supports, and starts the thread. kNotSupported when
  // no GPU supports any of these events (the caller runs without events).
  static Result<std::unique_ptr<EventMonitor>> Start(const nvml::Library& library,
                                                     const std::vector<nvml::Device>& gpus,
                                                     Options options);
  // Registers every GPU the library reports.
  static Result<std::unique_ptr<EventMonitor>> Start(const nvml::Library& library, Options options);
  // As above; the monitor keeps the library alive (collect::Sampler::library()).
  static Result<std::unique_ptr<EventMonitor>> Start(std::shared_ptr<const nvml::Library> library,
                                                     Options options);
  // Runs the thread on any source; `registered` is GPU index -> mask.
  static std::unique_ptr<EventMonitor> StartWith(std::unique_ptr<EventSource> source,
                                                 const std::map<unsigned, uint64_t>& registered,
                                                 Options options);

  ~EventMonitor();  // stops and joins
  EventMonitor(const EventMonitor&) = delete;
  EventMonitor& operator=(const EventMonitor&) = delete;

  // Stops the thread (returns within about wait_timeout_ms); idempotent.
  void Stop();
  // A copy of the state with the window expired at the current time.
  EventState State() const;
  double Now() const { return options_.clock(); }

 private:
  EventMonitor(std::unique_ptr<EventSource> source, Options options);
  void Run();
  // Logs `event` when it is an XID (XidLogLimiter) and the XIDs counted
  // since; on the thread, without the lock.
  void LogXids(const nvml::Event* event, double now);

  // Declared first so it is destroyed last: the source's event set uses it.
  std::shared_ptr<const nvml::Library> library_;  // set by the shared_ptr Start
  std::unique_ptr<EventSource> source_;
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  EventTracker tracker_;
  XidLogLimiter xid_log_;  // only the thread uses it
  double next_flush_ = 0;
  std::thread thread_;
};

}  // namespace gpuscope::health
