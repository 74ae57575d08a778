// Device calls with buffers: running processes, process utilization, batched
// field values, NVLink count and MIG enumeration.
#include <cstring>

#include "nvml/device.h"
#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

// The deepest link id probed when the driver does not report a link count
// (NVML_NVLINK_MAX_LINKS is 36 on R610).
constexpr unsigned kMaxNvLinksProbed = 64;
// A count that keeps growing between calls is given up after this many tries.
constexpr int kBufferAttempts = 4;
// Room for processes that start between the count and the read.
constexpr unsigned kProcessHeadroom = 8;

template <typename T>
T ReadAt(const unsigned char* base, std::size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));
  return value;
}

std::optional<uint32_t> InstanceId(unsigned id) {
  if (id == kNoInstanceId) return std::nullopt;
  return id;
}

// Decodes one process entry; the first 24 bytes are the same at both strides.
Process DecodeProcess(const unsigned char* entry) {
  Process p;
  p.pid = ReadAt<unsigned>(entry, offsetof(nvmlProcessInfo_v2_t, pid));
  const auto used =
      ReadAt<unsigned long long>(entry, offsetof(nvmlProcessInfo_v2_t, usedGpuMemory));
  if (used != kValueNotAvailable) p.used_memory_bytes = used;
  p.gpu_instance_id =
      InstanceId(ReadAt<unsigned>(entry, offsetof(nvmlProcessInfo_v2_t, gpuInstanceId)));
  p.compute_instance_id =
      InstanceId(ReadAt<unsigned>(entry, offsetof(nvmlProcessInfo_v2_t, computeInstanceId)));
  return p;
}

Result<FieldValue> DecodeField(const nvmlFieldValue_t& f) {
  FieldValue out;
  out.timestamp_us = f.timestamp;
  switch (f.valueType) {
    case kValueDouble:
      out.value = f.value.dVal;
      break;
    case kValueUint:
      out.value = uint64_t{f.value.uiVal};
      break;
    case kValueUlong:
      out.value = uint64_t{f.value.ulVal};
      break;
    case kValueUlonglong:
      out.value = uint64_t{f.value.ullVal};
      break;
    case kValueSlonglong:
      out.value = int64_t{f.value.sllVal};
      break;
    case kValueSint:
      out.value = int64_t{f.value.siVal};
      break;
    case kValueUshort:
      out.value = uint64_t{f.value.usVal};
      break;
    default:
      return Status::Internal("nvmlDeviceGetFieldValues: field " + std::to_string(f.fieldId) +
                              " has unknown value type " + std::to_string(f.valueType));
  }
  return out;
}

}  // namespace

Result<uint32_t> Device::NvLinkCount() const {
  const FieldRequest request{kFiNvLinkLinkCount, 0};
  auto field = FieldValues(std::span(&request, 1));
  if (field[0].ok()) return static_cast<uint32_t>(field[0]->AsDouble());
  uint32_t links = 0;
  int active = 0;
  while (links < kMaxNvLinksProbed &&
         Invoke(&Api::nvmlDeviceGetNvLinkState, links, &active) == kSuccess) {
    ++links;
  }
  if (links == 0) {  // not even link 0: say why
    GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetNvLinkState), 0u, &active));
  }
  return links;
}

// The three running-process lists share one ABI: a count, then entries at the
// driver's stride.
template <typename Fn>
Result<std::vector<Process>> Device::RunningProcesses(Fn Api::*fn, const char* name) const {
  const std::size_t stride = lib_->process_entry_stride();
  unsigned count = 0;
  int rc = Invoke(fn, &count, static_cast<nvmlProcessInfo_v2_t*>(nullptr));
  // 8-byte aligned storage for `count` entries at the driver's stride.
  std::vector<uint64_t> buffer;
  for (int attempt = 0; rc == kInsufficientSize && attempt < kBufferAttempts; ++attempt) {
    count += kProcessHeadroom;
    buffer.assign((count * stride + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    rc = Invoke(fn, &count, reinterpret_cast<nvmlProcessInfo_v2_t*>(buffer.data()));
  }
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, name, label_));
  std::vector<Process> processes;
  if (buffer.empty()) return processes;  // SUCCESS on the first call: none running
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer.data());
  const std::size_t capacity = buffer.size() * sizeof(uint64_t) / stride;
  for (std::size_t i = 0; i < count && i < capacity; ++i) {
    processes.push_back(DecodeProcess(bytes + i * stride));
  }
  return processes;
}

Result<std::vector<Process>> Device::ComputeProcesses() const {
  return RunningProcesses(&Api::nvmlDeviceGetComputeRunningProcesses_v3,
                          "nvmlDeviceGetComputeRunningProcesses_v3");
}

Result<std::vector<Process>> Device::GraphicsProcesses() const {
  return RunningProcesses(&Api::nvmlDeviceGetGraphicsRunningProcesses_v3,
                          "nvmlDeviceGetGraphicsRunningProcesses_v3");
}

Result<std::vector<Process>> Device::MpsComputeProcesses() const {
  return RunningProcesses(&Api::nvmlDeviceGetMPSComputeRunningProcesses_v3,
                          "nvmlDeviceGetMPSComputeRunningProcesses_v3");
}

Result<std::vector<ProcessUtilizationSample>> Device::ProcessUtilization(
    uint64_t last_seen_us) const {
  unsigned count = 0;
  std::vector<nvmlProcessUtilizationSample_t> raw;
  int rc = Invoke(&Api::nvmlDeviceGetProcessUtilization,
                  static_cast<nvmlProcessUtilizationSample_t*>(nullptr), &count,
                  static_cast<unsigned long long>(last_seen_us));
  for (int attempt = 0; rc == kInsufficientSize && attempt < kBufferAttempts; ++attempt) {
    count += kProcessHeadroom;
    raw.assign(count, nvmlProcessUtilizationSample_t{});
    rc = Invoke(&Api::nvmlDeviceGetProcessUtilization, raw.data(), &count,
                static_cast<unsigned long long>(last_seen_us));
  }
  std::vector<ProcessUtilizationSample> samples;
  if (rc == kNotFound) return samples;  // nothing newer than last_seen_us
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlDeviceGetProcessUtilization", label_));
  for (std::size_t i = 0; i < count && i < raw.size(); ++i) {
    const auto& s = raw[i];
    samples.push_back({s.pid, s.timeStamp, s.smUtil, s.memUtil, s.encUtil, s.decUtil});
  }
  return samples;
}

std::vector<Result<FieldValue>> Device::FieldValues(std::span<const FieldRequest> requests) const {
  // Every entry starts zeroed with only its ids set; NVML fills the rest.
  std::vector<nvmlFieldValue_t> raw(requests.size(), nvmlFieldValue_t{});
  for (std::size_t i = 0; i < requests.size(); ++i) {
    raw[i].fieldId = requests[i].field_id;
    raw[i].scopeId = requests[i].scope_id;
  }
  const Status call =
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetFieldValues), static_cast<int>(raw.size()), raw.data());
  std::vector<Result<FieldValue>> out;
  out.reserve(raw.size());
  for (const nvmlFieldValue_t& f : raw) {
    if (!call.ok()) {
      out.push_back(call);
    } else if (f.nvmlReturn != kSuccess) {
      out.push_back(lib_->Check(
          f.nvmlReturn, ("nvmlDeviceGetFieldValues field " + std::to_string(f.fieldId)).c_str(),
          label_));
    } else {
      out.push_back(DecodeField(f));
    }
  }
  return out;
}

Result<MigModeInfo> Device::MigMode() const {
  unsigned current = 0, pending = 0;
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetMigMode), &current, &pending));
  return MigModeInfo{current == 1, pending == 1};
}

Result<uint32_t> Device::MaxMigDeviceCount() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetMaxMigDeviceCount));
}

Result<Device> Device::MigDeviceAt(unsigned slot) const {
  nvmlDevice_t handle = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex), slot, &handle));
  Device mig(lib_, handle, index_);
  mig.parent_ = handle_;
  mig.mig_slot_ = slot;
  mig.label_ = label_ + " MIG " + std::to_string(slot);
  auto gi = mig.Get<unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetGpuInstanceId));
  if (!gi.ok()) return gi.status();
  auto ci = mig.Get<unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetComputeInstanceId));
  if (!ci.ok()) return ci.status();
  mig.gpu_instance_id_ = *gi;
  mig.compute_instance_id_ = *ci;
  return mig;
}

Result<std::vector<Device>> Device::MigDevices() const {
  // Slots exist on every MIG-capable GPU, but only hold devices in MIG mode.
  auto mode = MigMode();
  if (!mode.ok()) return mode.status();
  if (!mode->current) return std::vector<Device>();
  auto max = MaxMigDeviceCount();
  if (!max.ok()) return max.status();
  std::vector<Device> devices;
  for (unsigned slot = 0; slot < *max; ++slot) {
    auto mig = MigDeviceAt(slot);
    if (mig.ok()) {
      devices.push_back(std::move(*mig));
    } else if (ReturnCodeOf(mig.status()) != kNotFound) {
      return mig.status();  // NOT_FOUND is an empty slot
    }
  }
  return devices;
}

Result<MigAttributes> Device::Attributes() const {
  nvmlDeviceAttributes_t a{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetAttributes_v2), &a));
  return MigAttributes{a.multiprocessorCount,   a.sharedCopyEngineCount,     a.sharedDecoderCount,
                       a.sharedEncoderCount,    a.sharedJpegCount,           a.sharedOfaCount,
                       a.gpuInstanceSliceCount, a.computeInstanceSliceCount, a.memorySizeMB};
}

}  // namespace gpuscope::nvml
