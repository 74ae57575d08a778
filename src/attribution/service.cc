#include "attribution/service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "attribution/source.h"
#include "base/log.h"

namespace gpuscope::attribution {

DeviceProcesses ProcessesOf(const Snapshot& snapshot) {
  DeviceProcesses out;
  for (size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    for (const ProcessInfo& p : snapshot.samples[i].processes) {
      out[Attribution::DeviceKey(snapshot.gpus[i])].push_back({p.pid, p.name});
    }
  }
  return out;
}

DeviceVms VmsOf(const Snapshot& snapshot) {
  DeviceVms out;
  for (size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    for (const VgpuInstance& v : snapshot.samples[i].vgpus) {
      out[Attribution::DeviceKey(snapshot.gpus[i])].push_back(v.vm());
    }
  }
  return out;
}

Attribution Collect(const ServiceOptions& options, const std::vector<GpuInfo>& devices,
                    const DeviceProcesses& processes, const DeviceVms& vms) {
  return Collect(BuildSources(options), Inputs{devices, processes, &vms});
}

// What the refresh thread shares with its Service. The thread owns a
// reference, so a thread that Stop() stopped waiting for (blocked in a read)
// finishes on a live state after the Service is gone.
struct Service::State {
  explicit State(ServiceOptions o) : options(std::move(o)), sources(BuildSources(options)) {}
  const ServiceOptions options;
  const Sources sources;  // asked by the thread only
  std::mutex mu;
  std::condition_variable wake;    // work or stop for the thread
  std::condition_variable exited;  // the thread has returned
  std::vector<GpuInfo> devices;    // under mu
  DeviceProcesses processes;       // under mu
  DeviceVms vms;                   // under mu
  bool devices_changed = false;    // under mu; devices or processes
  bool stop = false;               // under mu
  bool done = false;               // under mu; the thread has returned
  std::atomic<std::shared_ptr<const Attribution>> latest;
  std::atomic<uint64_t> refreshes{0};
};

namespace {

// Logs the sources whose state changed since the last refresh (not every
// failed retry).
void LogSourceChanges(const Attribution& fresh, std::vector<std::string>& last_errors) {
  std::vector<std::string> errors;
  for (const auto& source : fresh.sources) errors.push_back(source.error);
  if (errors == last_errors) return;
  for (const auto& source : fresh.sources) {
    if (!source.up)
      log::Warn("attribution source {} is down: {}", source.name, source.error);
    else
      log::Info("attribution source {} is up", source.name);
  }
  last_errors = std::move(errors);
}

// Logs each conflict once, when it appears, and counts it into its source's
// conflicts_total. `current` holds the (source, job) pairs of the last refresh
// (bounded by the jobs on the node), `totals` the counts so far.
void NoteConflicts(Attribution& fresh, std::set<std::pair<std::string, std::string>>& current,
                   std::map<std::string, uint64_t>& totals) {
  std::set<std::pair<std::string, std::string>> now;
  for (const AttributionConflict& c : fresh.conflicts) {
    now.emplace(c.source, c.job);
    if (current.contains({c.source, c.job})) continue;
    ++totals[c.source];
    log::Warn(
        "attribution: the {} source gives Slurm job {} {}, but its processes run on {}; "
        "their cgroups win",
        c.source, c.job, c.named, c.found);
  }
  current = std::move(now);
  for (AttributionSource& source : fresh.sources) {
    const auto total = totals.find(source.name);
    if (total != totals.end()) source.conflicts_total = total->second;
  }
}

}  // namespace

Service::Service(ServiceOptions options) : state_(std::make_shared<State>(std::move(options))) {
  Attribution empty;
  for (const auto& source : state_->sources) {
    if (!source->reports_up()) continue;
    empty.sources.push_back({std::string(source->name()), false, std::string(source->not_yet())});
  }
  state_->latest.store(std::make_shared<const Attribution>(std::move(empty)));
}

Service::~Service() { Stop(); }

AttributionPtr Service::Latest() const { return state_->latest.load(); }

uint64_t Service::refreshes() const { return state_->refreshes.load(); }

void Service::SetDevices(std::vector<GpuInfo> devices) {
  std::lock_guard lock(state_->mu);
  state_->devices = std::move(devices);
  state_->devices_changed = true;
  if (!thread_.joinable() && !state_->stop) thread_ = std::thread(Loop, state_);
  state_->wake.notify_all();
}

void Service::SetProcesses(DeviceProcesses processes, DeviceVms vms) {
  std::lock_guard lock(state_->mu);
  if (processes == state_->processes && vms == state_->vms) return;
  state_->processes = std::move(processes);
  state_->vms = std::move(vms);
  state_->devices_changed = true;
  state_->wake.notify_all();
}

void Service::Stop() {
  std::unique_lock lock(state_->mu);
  state_->stop = true;
  state_->wake.notify_all();
  std::thread thread = std::move(thread_);
  if (!thread.joinable()) return;
  // Shutdown never waits on a source: a refresh blocked in a read (a hung
  // mount under the mapping directory, a runtime that holds its answer) is
  // left to finish on its own and publishes nothing.
  if (state_->exited.wait_for(lock, kStopWait, [&] { return state_->done; })) {
    lock.unlock();
    thread.join();
    return;
  }
  log::Warn("attribution refresh still blocked in a source after {} s; not waiting for it",
            std::chrono::duration<double>(kStopWait).count());
  thread.detach();
}

void Service::Loop(std::shared_ptr<State> state) {
  using Seconds = std::chrono::duration<double>;
  const ServiceOptions& options = state->options;
  const auto period = Seconds(options.refresh_s);
  auto last_refresh = std::chrono::steady_clock::time_point::min();
  std::vector<std::string> last_errors;
  std::set<std::pair<std::string, std::string>> conflicts;  // (source, job) last refresh
  std::map<std::string, uint64_t> conflicts_total;          // by source
  std::unique_lock lock(state->mu);
  while (!state->stop) {
    bool asked = false;  // every source is checked: none misses its change
    for (const auto& source : state->sources) asked = source->WantsRefresh() || asked;
    const bool due = state->devices_changed || asked ||
                     std::chrono::steady_clock::now() - last_refresh >= period;
    if (!due) {
      state->wake.wait_for(lock, Seconds(std::min(options.change_poll_s, options.refresh_s)));
      continue;
    }
    state->devices_changed = false;
    const std::vector<GpuInfo> devices = state->devices;
    const DeviceProcesses processes = state->processes;
    const DeviceVms vms = state->vms;
    lock.unlock();
    Attribution fresh = Collect(state->sources, Inputs{devices, processes, &vms});
    lock.lock();
    if (state->stop) break;  // Stop() may have stopped waiting: touch nothing more
    LogSourceChanges(fresh, last_errors);
    NoteConflicts(fresh, conflicts, conflicts_total);
    state->latest.store(std::make_shared<const Attribution>(std::move(fresh)));
    state->refreshes.fetch_add(1);
    last_refresh = std::chrono::steady_clock::now();
  }
  state->done = true;
  state->exited.notify_all();
}

}  // namespace gpuscope::attribution
