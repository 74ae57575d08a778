// Device's vGPU getters: the host's virtual GPUs (instance ids, not device
// handles, so the instance calls go through the Api table directly) and the
// guest's licence.
#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>

#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

double DecodeValue(int type, const nvmlValue_t& v) {
  switch (type) {
    case kValueDouble:
      return v.dVal;
    case kValueUint:
      return v.uiVal;
    case kValueUlong:
      return static_cast<double>(v.ulVal);
    case kValueUlonglong:
      return static_cast<double>(v.ullVal);
    case kValueSlonglong:
      return static_cast<double>(v.sllVal);
    case kValueSint:
      return v.siVal;
    default:
      return v.usVal;
  }
}

std::optional<int64_t> ExpiryUnix(const nvmlGridLicenseExpiry_t& e) {
  if (e.status != kLicenseExpiryValid || e.year < 1970 || e.month < 1 || e.month > 12) {
    return std::nullopt;
  }
  struct tm tm {};
  tm.tm_year = static_cast<int>(e.year) - 1900;
  tm.tm_mon = e.month - 1;
  tm.tm_mday = e.day;
  tm.tm_hour = e.hour;
  tm.tm_min = e.min;
  tm.tm_sec = e.sec;
  return static_cast<int64_t>(timegm(&tm));  // NVML's dates are GMT
}

// The string an instance getter writes; "" when it fails.
template <typename Fn>
std::string InstanceString(const Api& api, Fn Api::*fn, uint32_t id, unsigned size) {
  std::vector<char> buffer(size + 1, '\0');
  if (Invoke(api, fn, id, buffer.data(), size) != kSuccess) return "";
  return std::string(buffer.data());
}

}  // namespace

Result<int> Device::HostVgpuMode() const {
  return Get<int>(GPUSCOPE_NVML_FN(nvmlDeviceGetHostVgpuMode));
}

Result<std::vector<uint32_t>> Device::ActiveVgpus() const {
  std::vector<nvmlVgpuInstance_t> ids;
  for (int attempt = 0; attempt < 3; ++attempt) {  // instances may start between the calls
    unsigned count = static_cast<unsigned>(ids.size());
    const int rc = Invoke(&Api::nvmlDeviceGetActiveVgpus, &count, ids.data());
    if (rc == kInsufficientSize) {
      ids.resize(count);
      continue;
    }
    GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlDeviceGetActiveVgpus", label_));
    ids.resize(count);
    return std::vector<uint32_t>(ids.begin(), ids.end());
  }
  return lib_->Check(kInsufficientSize, "nvmlDeviceGetActiveVgpus", label_);
}

Result<VgpuInstanceInfo> Device::VgpuInstance(uint32_t id) const {
  const Api& api = lib_->api();
  VgpuInstanceInfo v;
  v.id = id;
  std::vector<char> vm(kVgpuVmIdBufferSize + 1, '\0');
  int vm_type = 0;
  const int rc = nvml::Invoke(api, &Api::nvmlVgpuInstanceGetVmID, id, vm.data(),
                              kVgpuVmIdBufferSize, &vm_type);
  const std::string subject = label_ + " vGPU " + std::to_string(id);
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlVgpuInstanceGetVmID", subject));
  v.vm_id = vm.data();
  v.vm_id_is_uuid = vm_type == kVgpuVmIdUuid;
  v.uuid = InstanceString(api, &Api::nvmlVgpuInstanceGetUUID, id, kVgpuUuidBufferSize);
  nvmlVgpuTypeId_t type = 0;
  if (nvml::Invoke(api, &Api::nvmlVgpuInstanceGetType, id, &type) == kSuccess) {
    std::vector<char> name(kVgpuTypeNameBufferSize + 1, '\0');
    unsigned size = kVgpuTypeNameBufferSize;
    if (nvml::Invoke(api, &Api::nvmlVgpuTypeGetName, type, name.data(), &size) == kSuccess) {
      v.type_name = name.data();
    }
    unsigned long long fb = 0;
    if (nvml::Invoke(api, &Api::nvmlVgpuTypeGetFramebufferSize, type, &fb) == kSuccess) {
      v.fb_total_bytes = fb;
    }
  }
  unsigned long long used = 0;
  if (nvml::Invoke(api, &Api::nvmlVgpuInstanceGetFbUsage, id, &used) == kSuccess) {
    v.fb_used_bytes = used;
  }
  nvmlVgpuLicenseInfo_t license{};
  if (nvml::Invoke(api, &Api::nvmlVgpuInstanceGetLicenseInfo_v2, id, &license) == kSuccess) {
    v.license_state = license.currentState;
  }
  return v;
}

Result<std::vector<VgpuUtilizationSample>> Device::VgpuUtilization(uint64_t last_seen_us) const {
  std::vector<nvmlVgpuInstanceUtilizationSample_t> raw;
  int type = kValueUint;
  unsigned count = 0;
  int rc = Invoke(&Api::nvmlDeviceGetVgpuUtilization, static_cast<unsigned long long>(last_seen_us),
                  &type, &count, static_cast<nvmlVgpuInstanceUtilizationSample_t*>(nullptr));
  if (rc == kNotFound) return std::vector<VgpuUtilizationSample>();  // no new samples
  if (rc == kSuccess || rc == kInsufficientSize) {
    raw.resize(count + 4);  // room for an instance started in between
    count = static_cast<unsigned>(raw.size());
    rc = Invoke(&Api::nvmlDeviceGetVgpuUtilization, static_cast<unsigned long long>(last_seen_us),
                &type, &count, raw.data());
    if (rc == kNotFound) return std::vector<VgpuUtilizationSample>();
  }
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlDeviceGetVgpuUtilization", label_));
  std::vector<VgpuUtilizationSample> out;
  for (unsigned i = 0; i < count && i < raw.size(); ++i) {
    const auto& s = raw[i];
    out.push_back({s.vgpuInstance, s.timeStamp, DecodeValue(type, s.smUtil),
                   DecodeValue(type, s.memUtil), DecodeValue(type, s.encUtil),
                   DecodeValue(type, s.decUtil)});
  }
  return out;
}

Result<std::vector<VgpuProcessSample>> Device::VgpuProcessUtilization(uint64_t last_seen_us) const {
  std::vector<nvmlVgpuProcessUtilizationSample_t> raw;
  unsigned count = 0;
  int rc = kInsufficientSize;
  for (int attempt = 0; attempt < 3 && rc == kInsufficientSize; ++attempt) {
    raw.resize(count);
    rc = Invoke(&Api::nvmlDeviceGetVgpuProcessUtilization,
                static_cast<unsigned long long>(last_seen_us), &count,
                raw.empty() ? nullptr : raw.data());
  }
  if (rc == kNotFound) return std::vector<VgpuProcessSample>();
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlDeviceGetVgpuProcessUtilization", label_));
  std::vector<VgpuProcessSample> out;
  for (unsigned i = 0; i < count && i < raw.size(); ++i) {
    const auto& s = raw[i];
    const std::string name(s.processName, strnlen(s.processName, sizeof s.processName));
    out.push_back({s.vgpuInstance, s.pid, name, s.timeStamp, s.smUtil, s.memUtil});
  }
  return out;
}

Result<VgpuSchedulerState> Device::VgpuScheduler() const {
  nvmlVgpuSchedulerGetState_t raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetVgpuSchedulerState), &raw));
  const bool arr = raw.arrMode == 2;  // adaptive round-robin: timeslice in the ARR member
  return VgpuSchedulerState{raw.schedulerPolicy,
                            arr ? raw.schedulerParams.vgpuSchedDataWithARR.timeslice
                                : raw.schedulerParams.vgpuSchedData.timeslice};
}

Result<GuestLicense> Device::GridLicense() const {
  nvmlGridLicensableFeatures_t raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetGridLicensableFeatures_v4), &raw));
  if (!raw.isGridLicenseSupported) {
    return lib_->Check(kNotSupported, "nvmlDeviceGetGridLicensableFeatures_v4", label_);
  }
  // The enabled feature is the one this vGPU runs under.
  const unsigned n =
      std::min<unsigned>(raw.licensableFeaturesCount, kNvmlGridLicenseFeatureMaxCount);
  for (unsigned i = 0; i < n; ++i) {
    const nvmlGridLicensableFeature_t& f = raw.gridLicensableFeatures[i];
    if (!f.featureEnabled) continue;
    GuestLicense out;
    out.licensed = f.featureState != 0;
    out.expires_unix = ExpiryUnix(f.licenseExpiry);
    out.permanent = f.licenseExpiry.status == kLicenseExpiryPermanent;
    out.product.assign(f.productName, strnlen(f.productName, sizeof f.productName));
    return out;
  }
  return lib_->Check(kNotSupported, "nvmlDeviceGetGridLicensableFeatures_v4", label_);
}

}  // namespace gpuscope::nvml
