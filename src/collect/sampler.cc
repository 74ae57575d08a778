#include "collect/sampler.h"

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "collect/inventory.h"
#include "collect/sampler_slot.h"

namespace gpuscope::collect {
namespace {

constexpr double kMinFastInterval = 0.1;

SamplerOptions Normalized(SamplerOptions o) {
  o.fast_interval_s = std::max(o.fast_interval_s, kMinFastInterval);
  o.slow_interval_s = std::max(o.slow_interval_s, o.fast_interval_s);
  o.pcie_interval_s = std::max(o.pcie_interval_s, o.fast_interval_s);
  if (o.window_resolution_s <= 0) o.window_resolution_s = o.fast_interval_s;
  if (o.watchdog_s <= 0) o.watchdog_s = std::max(2 * o.fast_interval_s, 1.0);
  o.lost_retry_min_s = std::max(o.lost_retry_min_s, 0.0);
  o.lost_retry_max_s = std::max(o.lost_retry_max_s, o.lost_retry_min_s);
  o.nvml_retry_max_s = std::max(o.nvml_retry_max_s, o.nvml_retry_min_s);
  return o;
}

ReadPlan PlanFor(const GpuInfo& info, const SamplerOptions& options) {
  return ReadPlan{info.nvlink_count, options.read_processes};
}

}  // namespace

double SystemClock() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Status ValidateOptions(const SamplerOptions& o) {
  if (!(o.fast_interval_s >= kMinFastInterval)) {
    return Status::InvalidArgument("fast interval must be at least 100 ms");
  }
  if (!(o.slow_interval_s >= o.fast_interval_s)) {
    return Status::InvalidArgument("slow interval must not be shorter than the fast interval");
  }
  if (!(o.pcie_interval_s >= o.fast_interval_s)) {
    return Status::InvalidArgument("PCIe interval must not be shorter than the fast interval");
  }
  if (!(o.window_span_s > 0)) return Status::InvalidArgument("window span must be positive");
  if (o.watchdog_s < 0) return Status::InvalidArgument("watchdog must not be negative");
  return Status::Ok();
}

Sampler::Sampler(SamplerOptions options, Clock clock, LibraryOpener opener)
    : options_(Normalized(std::move(options))),
      clock_(clock ? std::move(clock) : Clock(SystemClock)),
      opener_(std::move(opener)),
      window_(Window::Options{options_.window_span_s, options_.window_resolution_s}),
      latest_(std::make_shared<const Snapshot>()) {
  if (!opener_) {
    opener_ = [path = options_.nvml_path] { return nvml::Library::Open(path); };
  }
}

Sampler::~Sampler() {
  Stop();
  std::lock_guard lock(cycle_mu_);
  ShutdownWorkers();
}

// One shared grace period for all workers, so N hung GPUs cost no more than
// one. A worker still in a call is detached (see gpu_worker.h): it co-owns
// the Library, so nvmlShutdown runs only after that call returns, or never
// if the process exits first.
void Sampler::ShutdownWorkers() {
  const auto deadline = std::chrono::steady_clock::now() + GpuWorker::kStopGrace;
  for (auto& slot : slots_) slot->worker->RequestStop();
  std::size_t detached = 0;
  for (auto& slot : slots_) {
    if (!slot->worker->Shutdown(deadline)) ++detached;
  }
  if (detached > 0) {
    log::Warn("{} GPU worker(s) still inside an NVML call at shutdown; not waiting for them",
              detached);
  }
  slots_.clear();
}

Status Sampler::Open() {
  std::lock_guard lock(cycle_mu_);
  if (library_) return Status::Ok();
  return OpenLocked();
}

Status Sampler::OpenLocked() {
  auto opened = opener_();
  if (!opened.ok()) return opened.status();
  std::shared_ptr<nvml::Library> library = std::move(*opened);
  auto entries = DiscoverDevices(*library);
  if (!entries.ok()) return entries.status();
  std::vector<GpuInfo> infos;
  for (const DeviceEntry& e : *entries) infos.push_back(e.info);
  auto picked = SelectDevices(infos, options_.devices);
  if (!picked.ok()) return picked.status().Context("device selection");
  ShutdownWorkers();
  for (std::size_t i : *picked) {
    const DeviceEntry& e = (*entries)[i];
    if (!e.error.ok()) log::Warn("GPU {} did not open: {}", e.info.index, e.error.message());
    auto reader = std::make_unique<DeviceReader>(library, e.info, e.device, e.error,
                                                 PlanFor(e.info, options_));
    slots_.push_back(std::make_unique<Slot>(e.info, std::make_unique<GpuWorker>(std::move(reader)),
                                            options_.window_span_s));
  }
  system_ = ReadSystemInfo(*library);
  library_ = std::move(library);
  nvml_error_.clear();
  {
    std::lock_guard lock(publish_mu_);
    published_library_ = library_;
  }
  log::Info("NVML up: {} (driver {}), watching {} device(s)", library_->path(),
            system_.driver_version, slots_.size());
  return Status::Ok();
}

// Opens NVML when due; logs once per state change.
bool Sampler::EnsureLibrary(double now) {
  if (library_) return true;
  if (now < next_open_at_) return false;
  const Status status = OpenLocked();
  if (status.ok()) return true;
  if (status.message() != nvml_error_) {
    log::Warn("NVML unavailable: {} (retrying with backoff)", status.message());
  }
  nvml_error_ = status.message();
  open_backoff_ = open_backoff_ <= 0 ? options_.nvml_retry_min_s
                                     : std::min(open_backoff_ * 2, options_.nvml_retry_max_s);
  next_open_at_ = now + open_backoff_;
  return false;
}

// lifecycle_mu_ is held across the join: Loop() never takes it, and a Start
// racing a Stop waits for the old loop to end instead of running beside it.
void Sampler::Start() {
  std::lock_guard lifecycle(lifecycle_mu_);
  if (loop_.joinable()) return;
  {
    std::lock_guard lock(loop_mu_);
    stopping_ = false;
  }
  stop_requested_ = false;
  loop_ = std::thread([this] { Loop(); });
}

void Sampler::Stop() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(loop_mu_);
    stopping_ = true;
  }
  stop_requested_ = true;  // also ends a cycle's wait for a hung worker
  loop_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
}

void Sampler::Loop() {
  using namespace std::chrono;
  const auto interval =
      duration_cast<steady_clock::duration>(duration<double>(options_.fast_interval_s));
  auto next = steady_clock::now();
  while (true) {
    RunCycle(false, true);
    next += interval;
    const auto now = steady_clock::now();
    if (next < now) {  // a slow cycle: skip the ticks it overran
      next = now;
      overruns_.fetch_add(1, std::memory_order_relaxed);
    }
    std::unique_lock lock(loop_mu_);
    if (loop_cv_.wait_until(lock, next, [this] { return stopping_; })) return;
  }
}

SnapshotPtr Sampler::SampleOnce(bool all_tiers) { return RunCycle(all_tiers, false); }

SnapshotPtr Sampler::Latest() const {
  std::lock_guard lock(publish_mu_);
  return latest_;
}

void Sampler::OnPublish(std::function<void(const SnapshotPtr&)> callback) {
  std::lock_guard lock(publish_mu_);
  callbacks_.push_back(std::move(callback));
}

void Sampler::Decorate(std::function<void(Snapshot&)> decorator) {
  std::lock_guard lock(publish_mu_);
  decorator_ = std::move(decorator);
}

SnapshotPtr Sampler::Publish(Snapshot&& snapshot) {
  std::function<void(Snapshot&)> decorator;
  {
    std::lock_guard lock(publish_mu_);
    decorator = decorator_;
  }
  if (decorator) decorator(snapshot);
  auto published = std::make_shared<const Snapshot>(std::move(snapshot));
  std::vector<std::function<void(const SnapshotPtr&)>> callbacks;
  {
    std::lock_guard lock(publish_mu_);
    latest_ = published;
    callbacks = callbacks_;
  }
  for (const auto& callback : callbacks) callback(published);
  return published;
}

std::shared_ptr<const nvml::Library> Sampler::library() const {
  std::lock_guard lock(publish_mu_);
  return published_library_;
}

}  // namespace gpuscope::collect
