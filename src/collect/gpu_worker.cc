#include "collect/gpu_worker.h"

#include <utility>

#include "collect/inventory.h"

namespace gpuscope::collect {

DeviceReader::DeviceReader(std::shared_ptr<const nvml::Library> library, const GpuInfo& info,
                           std::optional<nvml::Device> device, Status open_error, ReadPlan plan)
    : library_(std::move(library)),
      info_(info),
      device_(std::move(device)),
      open_error_(std::move(open_error)),
      plan_(plan) {
  StartGpm();
}

void DeviceReader::StartGpm() {
  gpm_ = GpmState{};
  if (!info_.gpm_supported || !device_) return;
  auto sampler = nvml::GpmSampler::Create(*device_);
  if (sampler.ok()) gpm_.sampler = std::move(*sampler);
}

Status DeviceReader::Reattach() {
  const std::string& uuid = info_.is_mig() ? info_.mig_uuid : info_.uuid;
  Result<nvml::Device> device =
      uuid.empty() ? library_->DeviceByIndex(info_.index) : library_->DeviceByUuid(uuid);
  if (!device.ok()) return device.status();
  device_ = *device;
  if (info_.uuid.empty()) {  // first seen lost: describe it now
    info_ = DescribeGpu(*device_);
    plan_.nvlink_links = info_.nvlink_count;
    described_ = true;
  }
  StartGpm();
  return Status::Ok();
}

Reading DeviceReader::Read(double t, Tiers tiers, bool reattach) {
  Reading reading;
  reading.t = t;
  reading.tiers = tiers;
  if (reattach) {
    ++reading.calls;
    described_ = false;
    const Status status = Reattach();
    reading.reattached = status.ok();
    if (described_) reading.described = info_;
    if (!status.ok()) {
      // Any failure to find the GPU again keeps it lost.
      reading.lost = true;
      reading.error = status.message();
      return reading;
    }
  }
  if (!device_) {
    reading.lost = true;
    reading.error = open_error_.ok() ? "no handle" : open_error_.message();
    return reading;
  }
  ReadContext ctx(*library_, *device_, caps_, reading);
  ReadAll(ctx, gpm_, processes_, vgpus_, plan_);
  return reading;
}

GpuWorker::GpuWorker(std::unique_ptr<DeviceReader> reader)
    : state_(std::make_shared<State>(std::move(reader))),
      thread_([state = state_] { Run(*state); }) {}

GpuWorker::~GpuWorker() { Shutdown(std::chrono::steady_clock::now() + kStopGrace); }

void GpuWorker::RequestStop() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
}

bool GpuWorker::Shutdown(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) return joined_;
  RequestStop();
  bool exited = false;
  {
    std::unique_lock lock(state_->mu);
    exited = state_->cv.wait_until(lock, deadline, [this] { return state_->exited; });
  }
  if (exited) {
    thread_.join();
  } else {
    // Still inside an NVML call: the thread co-owns the state (and through
    // the reader the Library), so it may finish whenever it returns.
    thread_.detach();
  }
  joined_ = exited;
  return joined_;
}

bool GpuWorker::Post(const Job& job) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->job || state_->stop) return false;
    state_->job = job;
  }
  state_->cv.notify_all();
  return true;
}

bool GpuWorker::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(state_->mu);
  return state_->cv.wait_until(lock, deadline, [this] { return !state_->job.has_value(); });
}

bool GpuWorker::busy() const {
  std::lock_guard lock(state_->mu);
  return state_->job.has_value();
}

std::optional<Reading> GpuWorker::Take() {
  std::lock_guard lock(state_->mu);
  return std::exchange(state_->result, std::nullopt);
}

void GpuWorker::Run(State& s) {
  std::unique_lock lock(s.mu);
  while (true) {
    s.cv.wait(lock, [&s] { return s.stop || s.job.has_value(); });
    if (s.stop) break;
    const Job job = *s.job;
    lock.unlock();
    Reading reading = s.reader->Read(job.t, job.tiers, job.reattach);
    lock.lock();
    s.result = std::move(reading);
    s.job.reset();
    s.cv.notify_all();
  }
  s.exited = true;
  s.cv.notify_all();
}

}  // namespace gpuscope::collect
