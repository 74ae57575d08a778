#include "nvml/library.h"

#include <dlfcn.h>

#include <charconv>
#include <cstring>

#include "nvml/api.h"
#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

enum class Need { kRequired, kOptional };
constexpr Need Required = Need::kRequired;
constexpr Need Optional = Need::kOptional;

Status::Code CodeFor(int rc) {
  switch (rc) {
    case kNotSupported:
    case kFunctionNotFound:
    case kNoPermission:
      return Status::Code::kNotSupported;
    case kUninitialized:
    case kDriverNotLoaded:
    case kTimeout:
    case kIrqIssue:
    case kGpuIsLost:
    case kResetRequired:
    case kLibRmVersionMismatch:
    case kInUse:
    case kInsufficientPower:
    case kNotReady:
    case kInvalidState:
      return Status::Code::kUnavailable;
    case kNotFound:
    case kGpuNotFound:
    case kLibraryNotFound:
    case kNoData:
      return Status::Code::kNotFound;
    case kInvalidArgument:
    case kArgumentVersionMismatch:
      return Status::Code::kInvalidArgument;
    default:
      return Status::Code::kInternal;
  }
}

Status MakeStatus(Status::Code code, std::string message) {
  switch (code) {
    case Status::Code::kOk:
      return Status::Ok();
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(std::move(message));
    case Status::Code::kNotFound:
      return Status::NotFound(std::move(message));
    case Status::Code::kUnavailable:
      return Status::Unavailable(std::move(message));
    case Status::Code::kNotSupported:
      return Status::NotSupported(std::move(message));
    case Status::Code::kInternal:
      break;
  }
  return Status::Internal(std::move(message));
}

Status LoadError(const std::string& path, const char* dl_error) {
  const std::string detail = dl_error != nullptr ? dl_error : "unknown dlopen error";
  if (detail.find("No such file") != std::string::npos) {
    return Status::NotFound("NVIDIA driver library " + path +
                            " not found (is the NVIDIA driver installed? use --nvml-lib PATH or "
                            "--simulate SCENARIO)")
        .WithDetail(kLibraryNotFound);  // nvidia-smi's return code for it: no driver
  }
  return Status::NotFound("cannot load NVIDIA driver library " + path + ": " + detail)
      .WithDetail(kLibraryNotFound);
}

}  // namespace

Library::Library(std::string path, void* handle)
    : path_(std::move(path)), handle_(handle), api_(std::make_unique<Api>()) {}

Library::~Library() {
  if (initialized_) Invoke(*api_, &Api::nvmlShutdown);
  if (handle_ != nullptr) dlclose(handle_);
}

Result<std::unique_ptr<Library>> Library::Open(const std::string& path) {
  dlerror();
  // NODELETE: the library stays mapped after the last Library closes, so a
  // reopen is cheap and the simulator's deliberately immortal state stays
  // reachable (LeakSanitizer would report it once unmapped).
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) return LoadError(path, dlerror());
  std::unique_ptr<Library> lib(new Library(path, handle));
  GPUSCOPE_RETURN_IF_ERROR(lib->ResolveSymbols());
  GPUSCOPE_RETURN_IF_ERROR(lib->Init());
  lib->ReadSystemInfo();
  return lib;
}

Status Library::ResolveSymbols() {
  std::string missing;
  // Looks each row up by its exported name; a missing required one is fatal.
#define GPUSCOPE_NVML_RESOLVE(name, need, params)                             \
  api_->name = reinterpret_cast<decltype(api_->name)>(dlsym(handle_, #name)); \
  if (api_->name == nullptr && need == Need::kRequired)                       \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_NVML_RESOLVE)
#undef GPUSCOPE_NVML_RESOLVE
  api_->nvmlErrorString =
      reinterpret_cast<decltype(api_->nvmlErrorString)>(dlsym(handle_, "nvmlErrorString"));
  sim_.last_error = reinterpret_cast<SimHooks::LastError>(dlsym(handle_, "gpuscopeSimLastError"));
  sim_.set_time = reinterpret_cast<SimHooks::SetTime>(dlsym(handle_, "gpuscopeSimSetTime"));
  sim_.get_time = reinterpret_cast<SimHooks::GetTime>(dlsym(handle_, "gpuscopeSimGetTime"));
  if (missing.empty()) return Status::Ok();
  return Status::NotSupported("NVIDIA driver library " + path_ + " lacks required symbol " +
                              missing + " (driver too old?)");
}

Status Library::Init() {
  const int rc = Invoke(*api_, &Api::nvmlInit_v2);
  if (rc == kSuccess) {
    initialized_ = true;
    return Status::Ok();
  }
  // The driver case users meet first gets one plain sentence; otherwise the
  // simulator's own reason (a bad scenario: "<file>:<line>: <problem>").
  if (rc == kDriverNotLoaded) {
    return Status::Unavailable(
               "NVIDIA kernel driver is not loaded (nvmlInit_v2 returned "
               "NVML_ERROR_DRIVER_NOT_LOADED; "
               "is the nvidia module loaded? use --simulate SCENARIO to run without a GPU)")
        .WithDetail(rc);
  }
  if (sim_.last_error != nullptr) {
    const char* message = sim_.last_error();
    if (message != nullptr && *message != '\0')
      return MakeStatus(CodeFor(rc), message).WithDetail(rc);
  }
  return Check(rc, "nvmlInit_v2", "");
}

void Library::ReadSystemInfo() {
  char buffer[kSystemVersionBufferSize + 1] = {};
  if (Invoke(*api_, &Api::nvmlSystemGetDriverVersion, buffer, kSystemVersionBufferSize) ==
      kSuccess) {
    driver_version_ = buffer;
  }
  std::memset(buffer, 0, sizeof(buffer));
  if (Invoke(*api_, &Api::nvmlSystemGetNVMLVersion, buffer, kSystemVersionBufferSize) == kSuccess) {
    nvml_version_ = buffer;
  }
  int cuda = 0;
  if (Invoke(*api_, &Api::nvmlSystemGetCudaDriverVersion_v2, &cuda) == kSuccess) {
    cuda_version_ = FormatCudaVersion(cuda);
  }
  process_entry_stride_ =
      IsEarly535(driver_version_) ? kProcessInfoStrideEarly535 : kProcessInfoStride;
}

Status Library::Check(int rc, const char* call, const std::string& subject) const {
  if (rc == kSuccess) return Status::Ok();
  std::string text;
  if (rc == kFunctionNotFound) {
    text = "not exported by this driver";
  } else if (api_->nvmlErrorString != nullptr) {
    const char* s = api_->nvmlErrorString(rc);
    if (s != nullptr) text = s;
  }
  if (text.empty()) text = "error " + std::to_string(rc);
  std::string message = call;
  if (!subject.empty()) message += " (" + subject + ")";
  message += ": " + text + " (" + ReturnName(rc) + ")";
  return MakeStatus(CodeFor(rc), std::move(message)).WithDetail(rc);
}

Result<unsigned> Library::DeviceCount() const {
  unsigned count = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      Check(Invoke(*api_, &Api::nvmlDeviceGetCount_v2, &count), "nvmlDeviceGetCount_v2", ""));
  return count;
}

Result<Device> Library::DeviceByIndex(unsigned index) const {
  nvmlDevice_t handle = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(Check(Invoke(*api_, &Api::nvmlDeviceGetHandleByIndex_v2, index, &handle),
                                 "nvmlDeviceGetHandleByIndex_v2", "GPU " + std::to_string(index)));
  return Device(this, handle, index);
}

Result<Device> Library::DeviceByUuid(const std::string& uuid) const {
  nvmlDevice_t handle = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      Check(Invoke(*api_, &Api::nvmlDeviceGetHandleByUUID, uuid.c_str(), &handle),
            "nvmlDeviceGetHandleByUUID", uuid));
  unsigned is_mig = 0;
  if (Invoke(*api_, &Api::nvmlDeviceIsMigDeviceHandle, handle, &is_mig) == kSuccess && is_mig) {
    nvmlDevice_t parent = nullptr;
    GPUSCOPE_RETURN_IF_ERROR(
        Check(Invoke(*api_, &Api::nvmlDeviceGetDeviceHandleFromMigDeviceHandle, handle, &parent),
              "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", uuid));
    unsigned index = 0;
    GPUSCOPE_RETURN_IF_ERROR(
        Check(Invoke(*api_, &Api::nvmlDeviceGetIndex, parent, &index), "nvmlDeviceGetIndex", uuid));
    const Device gpu(this, parent, index);
    auto count = gpu.MaxMigDeviceCount();
    if (!count.ok()) return count.status();
    for (unsigned slot = 0; slot < *count; ++slot) {
      auto mig = gpu.MigDeviceAt(slot);
      if (mig.ok() && mig->handle() == handle) return mig;
    }
    return Status::NotFound("MIG device " + uuid + " not found on GPU " + std::to_string(index));
  }
  unsigned index = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      Check(Invoke(*api_, &Api::nvmlDeviceGetIndex, handle, &index), "nvmlDeviceGetIndex", uuid));
  return Device(this, handle, index);
}

Result<std::string> Library::ProcessName(unsigned pid) const {
  char name[kProcessNameBufferSize + 1] = {};
  GPUSCOPE_RETURN_IF_ERROR(
      Check(Invoke(*api_, &Api::nvmlSystemGetProcessName, pid, name, kProcessNameBufferSize),
            "nvmlSystemGetProcessName", "pid " + std::to_string(pid)));
  return std::string(name);
}

bool Library::Has(std::string_view exported_name) const {
#define GPUSCOPE_NVML_HAS(name, need, params) \
  if (exported_name == #name) return api_->name != nullptr;
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_NVML_HAS)
#undef GPUSCOPE_NVML_HAS
  if (exported_name == "nvmlErrorString") return api_->nvmlErrorString != nullptr;
  return false;
}

std::vector<std::string> Library::MissingSymbols() const {
  std::vector<std::string> missing;
#define GPUSCOPE_NVML_MISSING(name, need, params) \
  if (api_->name == nullptr) missing.push_back(#name);
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_NVML_MISSING)
#undef GPUSCOPE_NVML_MISSING
  return missing;
}

void* Library::FindSymbol(const char* name) const { return dlsym(handle_, name); }

std::optional<int> ReturnCodeOf(const Status& status) {
  return status.ok() ? std::nullopt : status.detail();
}

const char* ReturnCodeName(int code) { return ReturnName(code); }

bool IsGpuLost(const Status& status) { return ReturnCodeOf(status) == kGpuIsLost; }

std::string FormatCudaVersion(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

bool IsEarly535(std::string_view driver_version) {
  constexpr std::string_view kBranch = "535.";
  if (!driver_version.starts_with(kBranch)) return false;
  const std::string_view rest = driver_version.substr(kBranch.size());
  unsigned minor = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), minor);
  return ec == std::errc() && end != rest.data() && minor < 98;
}

}  // namespace gpuscope::nvml
