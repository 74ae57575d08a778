#include "collect/gpu_worker.h"

#include <utility>

#include "collect/inventory.h"

namespace gpuscope::collect {

DeviceReader::DeviceReader(const nvml::Library& library, const GpuInfo& info,
                           std::optional<nvml::Device> device, Status open_error, ReadPlan plan)
    : library_(library),
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
      uuid.empty() ? library_.DeviceByIndex(info_.index) : library_.DeviceByUuid(uuid);
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
  ReadContext ctx(library_, *device_, caps_, reading);
  ReadAll(ctx, gpm_, plan_);
  return reading;
}

GpuWorker::GpuWorker(std::unique_ptr<DeviceReader> reader)
    : reader_(std::move(reader)), thread_([this] { Run(); }) {}

GpuWorker::~GpuWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool GpuWorker::Post(const Job& job) {
  {
    std::lock_guard lock(mu_);
    if (job_) return false;
    job_ = job;
  }
  cv_.notify_all();
  return true;
}

bool GpuWorker::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, deadline, [this] { return !job_.has_value(); });
}

bool GpuWorker::busy() const {
  std::lock_guard lock(mu_);
  return job_.has_value();
}

std::optional<Reading> GpuWorker::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(result_, std::nullopt);
}

void GpuWorker::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || job_.has_value(); });
    if (stop_) return;
    const Job job = *job_;
    lock.unlock();
    Reading reading = reader_->Read(job.t, job.tiers, job.reattach);
    lock.lock();
    result_ = std::move(reading);
    job_.reset();
    cv_.notify_all();
  }
}

}  // namespace gpuscope::collect
