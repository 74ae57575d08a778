#include "health/service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

namespace gpuscope::health {

HealthReport RunOnce(const RunOptions& options) {
  collect::Sampler sampler(options.sampler);
  const Status opened = sampler.Open();
  std::unique_ptr<EventMonitor> monitor;
  if (opened.ok()) {
    EventMonitor::Options eo;
    eo.xid_window_seconds = options.health.xid_window_seconds;
    eo.on_xid = [&sampler](unsigned gpu, uint64_t xid) { sampler.RecordXid(gpu, xid); };
    auto started = EventMonitor::Start(sampler.library(), eo);
    if (started.ok()) {
      monitor = std::move(*started);
    } else {
      spdlog::info("health: running without XID events: {}", started.status().message());
    }
  }
  HealthState state;
  const EventState no_events;
  SnapshotPtr snap = sampler.SampleOnce(true);
  HealthReport report = Evaluate(*snap, monitor ? monitor->State() : no_events, state,
                                 collect::SystemClock(), options.health);
  if (opened.ok() && options.watch_seconds > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.watch_seconds));
    snap = sampler.SampleOnce(true);
    report = Evaluate(*snap, monitor ? monitor->State() : no_events, state, collect::SystemClock(),
                      options.health);
  }
  if (monitor) monitor->Stop();
  return report;
}

Service::Service(HealthOptions health, FamilyOptions families)
    : health_(std::move(health)), families_(std::move(families)) {}

std::vector<prom::Family> Service::Update(const Snapshot& snapshot, const EventState& events,
                                          double now) {
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = Evaluate(snapshot, events, state_, now, health_);
  return ToFamilies(latest_, families_);
}

HealthReport Service::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

}  // namespace gpuscope::health
