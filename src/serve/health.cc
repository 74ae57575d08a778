#include "serve/health.h"

#include <chrono>
#include <memory>
#include <thread>

#include "base/log.h"
#include "health/families.h"

namespace gpuscope::serve {

health::HealthReport JudgeCycle(Snapshot& snapshot, const health::EventState& events,
                                health::HealthState& state, double now,
                                const health::HealthOptions& options) {
  health::ApplyEvents(events, snapshot);
  return health::Evaluate(snapshot, events, state, now, options);
}

health::HealthReport RunHealthOnce(const HealthRunOptions& options, Status* open_status) {
  collect::Sampler sampler(options.sampler);
  const Status opened = sampler.Open();
  if (open_status != nullptr) *open_status = opened;
  std::unique_ptr<health::EventMonitor> monitor;
  if (opened.ok()) {
    health::EventMonitor::Options eo;
    eo.xid_window_seconds = options.health.xid_window_seconds;
    auto started = health::EventMonitor::Start(sampler.library(), eo);
    if (started.ok()) {
      monitor = std::move(*started);
    } else {
      log::Info("health: running without XID events: {}", started.status().message());
    }
  }
  health::HealthState state;
  auto judge = [&] {
    Snapshot snapshot = *sampler.SampleOnce(true);
    snapshot.attribution = std::make_shared<const Attribution>(
        attribution::Collect(options.attribution, snapshot.gpus, attribution::ProcessesOf(snapshot),
                             attribution::VmsOf(snapshot)));
    const health::EventState events = monitor ? monitor->State() : health::EventState{};
    return JudgeCycle(snapshot, events, state, collect::SystemClock(), options.health);
  };
  health::HealthReport report = judge();
  while (opened.ok() && options.watch_seconds > 0) {
    if (!options.wait_next) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options.watch_seconds));
      report = judge();
      break;
    }
    if (!options.wait_next()) break;
    report = judge();
    if (!options.on_report || !options.on_report(report)) break;
  }
  if (monitor) monitor->Stop();
  return report;
}

}  // namespace gpuscope::serve
