#include "health/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/log.h"
#include "health/xid_catalog.h"
#include "nvml/library.h"

namespace gpuscope::health {
namespace {

constexpr unsigned kMaxErrorPauseMs = 1000;

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// nvml::EventSet behind the EventSource seam.
class NvmlEventSource : public EventSource {
 public:
  explicit NvmlEventSource(std::unique_ptr<nvml::EventSet> set) : set_(std::move(set)) {}
  Result<std::optional<nvml::Event>> Wait(unsigned timeout_ms) override {
    return set_->Wait(timeout_ms);
  }

 private:
  std::unique_ptr<nvml::EventSet> set_;
};

}  // namespace

std::map<unsigned, uint64_t> GpuEvents::WindowCounts(double since) const {
  std::map<unsigned, uint64_t> counts;
  for (const XidOccurrence& x : recent) {
    if (x.time >= since) counts[x.xid] += x.count;
  }
  return counts;
}

const GpuEvents* EventState::Find(unsigned gpu) const {
  auto it = gpus.find(gpu);
  return it == gpus.end() ? nullptr : &it->second;
}

EventTracker::EventTracker(double window_seconds) { state_.window_seconds = window_seconds; }

void EventTracker::Registered(unsigned gpu, uint64_t mask) {
  state_.gpus[gpu].registered_mask = mask;
}

void EventTracker::Record(const nvml::Event& event, double now) {
  GpuEvents& g = state_.gpus[event.device_index];
  switch (event.type) {
    case nvml::events::kXidCritical: {
      // Any code is counted; the catalog decides later what it means.
      const auto xid = static_cast<unsigned>(std::min<uint64_t>(event.data, 0xFFFFFFFFu));
      ++g.xid_counts[xid];
      g.last_xid = xid;
      g.last_xid_time = now;
      // Merge into this second's entry for the code (few codes per second,
      // at the back): a storm grows a count, not the deque.
      const auto second = static_cast<int64_t>(std::floor(now));
      for (auto it = g.recent.rbegin(); it != g.recent.rend(); ++it) {
        if (static_cast<int64_t>(std::floor(it->time)) != second) break;
        if (it->xid == xid) {
          ++it->count;
          it->time = std::max(it->time, now);
          return;
        }
      }
      g.recent.push_back({now, xid, 1});
      break;
    }
    case nvml::events::kSingleBitEcc:
      ++g.sbe_events;
      break;
    case nvml::events::kDoubleBitEcc:
      ++g.dbe_events;
      break;
    case nvml::events::kGpuUnavailable:
      ++g.unavailable_events;
      g.last_unavailable_time = now;
      break;
    case nvml::events::kGpuRecoveryAction:
      ++g.recovery_action_events;
      g.last_recovery_action = event.data;
      break;
    default:
      break;  // other types are not registered; ignore them if they come
  }
}

void EventTracker::Expire(double now) {
  const double oldest = now - state_.window_seconds;
  for (auto& [index, g] : state_.gpus) {
    while (!g.recent.empty() && g.recent.front().time < oldest) g.recent.pop_front();
  }
}

void EventTracker::SetError(std::string error) { state_.error = std::move(error); }

std::string XidLogLimiter::Line(unsigned gpu, unsigned xid, const Entry& e, uint64_t count,
                                double now) const {
  const XidInfo info = LookupXid(xid);
  const std::string what = fmt::format("XID {} on GPU {} ({})", xid, gpu, info.name);
  if (e.last_line == 0 && count == 1) return what;
  return fmt::format(
      "{}: {} since the last line {:.0f} s ago (one line per {:.0f} s per GPU and XID)", what,
      count, now - e.last_line, interval_s_);
}

std::string XidLogLimiter::Observe(unsigned gpu, unsigned xid, double now) {
  auto [it, first] = entries_.try_emplace({gpu, xid});
  Entry& e = it->second;
  if (!first && now - e.last_line < interval_s_) {
    ++e.suppressed;
    return "";
  }
  std::string line = Line(gpu, xid, first ? Entry{} : e, e.suppressed + 1, now);
  e.last_line = now;
  e.suppressed = 0;
  return line;
}

std::vector<std::string> XidLogLimiter::Flush(double now) {
  std::vector<std::string> lines;
  for (auto& [key, e] : entries_) {
    if (e.suppressed == 0 || now - e.last_line < interval_s_) continue;
    lines.push_back(Line(key.first, key.second, e, e.suppressed, now));
    e.last_line = now;
    e.suppressed = 0;
  }
  return lines;
}

void EventTracker::WaitFailed(std::string error) {
  state_.error = std::move(error);
  ++state_.wait_errors;
  state_.last_wait_ok = false;
}

EventMonitor::EventMonitor(std::unique_ptr<EventSource> source, Options options)
    : source_(std::move(source)),
      options_(std::move(options)),
      tracker_(options_.xid_window_seconds),
      xid_log_(options_.xid_log_interval_seconds) {
  if (!options_.clock) options_.clock = SystemNow;
  if (!options_.log_line) {
    options_.log_line = [](const std::string& line) { log::Warn("events: {}", line); };
  }
  if (options_.wait_timeout_ms == 0) options_.wait_timeout_ms = 1;
}

Result<std::unique_ptr<EventMonitor>> EventMonitor::Start(const nvml::Library& library,
                                                          const std::vector<nvml::Device>& gpus,
                                                          Options options) {
  auto set = nvml::EventSet::Create(library);
  if (!set.ok()) return set.status().Context("starting the event thread");
  std::map<unsigned, uint64_t> registered;
  std::string last_error;
  for (const nvml::Device& gpu : gpus) {
    if (gpu.is_mig() || registered.count(gpu.index())) continue;
    auto mask = (*set)->Register(gpu, nvml::events::kHealth);
    if (mask.ok()) {
      registered[gpu.index()] = *mask;
    } else {
      // One GPU without events (lost, too old) must not stop the others.
      last_error = mask.status().message();
      log::Warn("events: {}", last_error);
    }
  }
  if (registered.empty()) {
    return Status::NotSupported("no GPU supports XID/ECC events" +
                                (last_error.empty() ? "" : " (" + last_error + ")"));
  }
  auto source = std::make_unique<NvmlEventSource>(std::move(*set));
  return StartWith(std::move(source), registered, std::move(options));
}

Result<std::unique_ptr<EventMonitor>> EventMonitor::Start(const nvml::Library& library,
                                                          Options options) {
  auto count = library.DeviceCount();
  if (!count.ok()) return count.status().Context("starting the event thread");
  std::vector<nvml::Device> gpus;
  for (unsigned i = 0; i < *count; ++i) {
    auto device = library.DeviceByIndex(i);
    if (device.ok()) gpus.push_back(*device);
  }
  return Start(library, gpus, std::move(options));
}

Result<std::unique_ptr<EventMonitor>> EventMonitor::Start(
    std::shared_ptr<const nvml::Library> library, Options options) {
  if (!library) return Status::Unavailable("starting the event thread: NVML is not open");
  auto monitor = Start(*library, std::move(options));
  if (monitor.ok()) (*monitor)->library_ = std::move(library);
  return monitor;
}

std::unique_ptr<EventMonitor> EventMonitor::StartWith(
    std::unique_ptr<EventSource> source, const std::map<unsigned, uint64_t>& registered,
    Options options) {
  std::unique_ptr<EventMonitor> monitor(new EventMonitor(std::move(source), std::move(options)));
  for (const auto& [gpu, mask] : registered) monitor->tracker_.Registered(gpu, mask);
  monitor->tracker_.SetRunning(true);
  monitor->thread_ = std::thread([m = monitor.get()] { m->Run(); });
  return monitor;
}

EventMonitor::~EventMonitor() { Stop(); }

void EventMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  tracker_.SetRunning(false);
}

void EventMonitor::Run() {
  const unsigned pause_ms = std::min(options_.wait_timeout_ms, kMaxErrorPauseMs);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    // Wait outside the lock: it blocks up to wait_timeout_ms.
    Result<std::optional<nvml::Event>> got = source_->Wait(options_.wait_timeout_ms);
    const double now = options_.clock();
    std::unique_lock<std::mutex> lock(mu_);
    if (got.ok()) {
      tracker_.WaitSucceeded();
      if (got->has_value()) tracker_.Record(**got, now);
      tracker_.Expire(now);
      lock.unlock();  // the log is the thread's own
      LogXids(got->has_value() ? &**got : nullptr, now);
      continue;
    }
    // A lost GPU or driver trouble: note it, pause (so a persistent error
    // does not spin), and keep waiting for the other GPUs' events.
    if (tracker_.state().error != got.status().message()) {
      log::Warn("events: {}", got.status().message());
    }
    tracker_.WaitFailed(got.status().message());
    cv_.wait_for(lock, std::chrono::milliseconds(pause_ms), [this] { return stop_; });
  }
}

void EventMonitor::LogXids(const nvml::Event* event, double now) {
  if (event && event->type == nvml::events::kXidCritical) {
    const auto xid = static_cast<unsigned>(std::min<uint64_t>(event->data, 0xFFFFFFFFu));
    if (std::string line = xid_log_.Observe(event->device_index, xid, now); !line.empty()) {
      options_.log_line(line);
    }
  }
  if (now < next_flush_) return;  // the counted XIDs are reported about once a second
  next_flush_ = now + 1;
  for (const std::string& line : xid_log_.Flush(now)) options_.log_line(line);
}

EventState EventMonitor::State() const {
  const double now = options_.clock();
  std::lock_guard<std::mutex> lock(mu_);
  EventTracker copy = tracker_;
  copy.Expire(now);
  return copy.state();
}

}  // namespace gpuscope::health
