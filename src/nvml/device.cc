// Identity, telemetry and health getters: a thin, regular mapping onto NVML.
#include "nvml/device.h"

#include "nvml/device_call.h"

namespace gpuscope::nvml {
namespace {

// The public selectors are NVML's values; prove it once.
static_assert(static_cast<int>(ClockDomain::kVideo) == kClockVideo);
static_assert(static_cast<int>(TempThreshold::kGpuMax) == kThresholdGpuMax);
static_assert(static_cast<int>(PcieDirection::kRx) == kPcieRx);
static_assert(static_cast<int>(EccKind::kUncorrected) == kEccUncorrected);
static_assert(static_cast<int>(EccScope::kAggregate) == kEccAggregate);
static_assert(static_cast<int>(EccLocation::kSram) == kMemSram);
static_assert(static_cast<int>(PageRetireCause::kDbe) == kRetiredDbe);
static_assert(static_cast<int>(NvLinkCounter::kEccData) == kNvLinkEccData);

template <typename E>
int Raw(E e) {
  return static_cast<int>(e);
}

}  // namespace

Device::Device(const Library* lib, void* handle, unsigned index)
    : lib_(lib), handle_(handle), index_(index), label_("GPU " + std::to_string(index)) {}

Device Device::Parent() const {
  if (!is_mig()) return *this;
  return Device(lib_, parent_, index_);
}

Result<std::string> Device::Name() const {
  return GetString(GPUSCOPE_NVML_FN(nvmlDeviceGetName), kDeviceNameBufferSize);
}
Result<std::string> Device::Uuid() const {
  return GetString(GPUSCOPE_NVML_FN(nvmlDeviceGetUUID), kDeviceUuidBufferSize);
}
Result<std::string> Device::Serial() const {
  return GetString(GPUSCOPE_NVML_FN(nvmlDeviceGetSerial), kDeviceSerialBufferSize);
}
Result<std::string> Device::VbiosVersion() const {
  return GetString(GPUSCOPE_NVML_FN(nvmlDeviceGetVbiosVersion), kDeviceVbiosBufferSize);
}

Result<PciInfo> Device::Pci() const {
  nvmlPciInfo_t raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetPciInfo_v3), &raw));
  raw.busId[sizeof(raw.busId) - 1] = '\0';
  return PciInfo{raw.busId, raw.domain, raw.bus, raw.device, raw.pciDeviceId, raw.pciSubSystemId};
}

Result<uint32_t> Device::MinorNumber() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetMinorNumber));
}
Result<uint32_t> Device::Architecture() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetArchitecture));
}
Result<int> Device::Brand() const { return Get<int>(GPUSCOPE_NVML_FN(nvmlDeviceGetBrand)); }

Result<ComputeCapability> Device::CudaComputeCapability() const {
  ComputeCapability cc;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetCudaComputeCapability), &cc.major, &cc.minor));
  return cc;
}

Result<bool> Device::PersistenceMode() const {
  return Get<bool, int>(GPUSCOPE_NVML_FN(nvmlDeviceGetPersistenceMode));
}
Result<bool> Device::DisplayMode() const {
  return Get<bool, int>(GPUSCOPE_NVML_FN(nvmlDeviceGetDisplayMode));
}
Result<int> Device::ComputeMode() const {
  return Get<int>(GPUSCOPE_NVML_FN(nvmlDeviceGetComputeMode));
}
Result<bool> Device::PowerManagementMode() const {
  return Get<bool, int>(GPUSCOPE_NVML_FN(nvmlDeviceGetPowerManagementMode));
}

Result<int> Device::VirtualizationMode() const {
  return Get<int>(GPUSCOPE_NVML_FN(nvmlDeviceGetVirtualizationMode));
}

InforomInfo Device::Inforom() const {
  auto object = [this](int which) -> std::string {
    char buffer[kInforomVersionBufferSize + 1] = {};
    Status s = Call(GPUSCOPE_NVML_FN(nvmlDeviceGetInforomVersion), which, buffer,
                    kInforomVersionBufferSize);
    return s.ok() ? std::string(buffer) : std::string();
  };
  InforomInfo info;
  Result<std::string> image =
      GetString(GPUSCOPE_NVML_FN(nvmlDeviceGetInforomImageVersion), kInforomVersionBufferSize);
  if (image.ok()) info.image = *image;
  info.oem = object(kInforomOem);
  info.ecc = object(kInforomEcc);
  info.power = object(kInforomPower);
  return info;
}

Result<uint32_t> Device::InforomChecksum() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetInforomConfigurationChecksum));
}

Result<bool> Device::InforomValid() const {
  Status s = Call(GPUSCOPE_NVML_FN(nvmlDeviceValidateInforom));
  if (s.ok()) return true;
  if (ReturnCodeOf(s) == kCorruptedInforom) return false;
  return s;
}

Result<Bar1Memory> Device::Bar1() const {
  nvmlBAR1Memory_t raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetBAR1MemoryInfo), &raw));
  return Bar1Memory{raw.bar1Total, raw.bar1Free, raw.bar1Used};
}

Result<FabricInfo> Device::Fabric() const {
  nvmlGpuFabricInfo_v2_t raw{};
  raw.version = kGpuFabricInfoV2Version;
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetGpuFabricInfoV), &raw));
  if (raw.state == kFabricStateNotSupported) {
    return Status::NotSupported("nvmlDeviceGetGpuFabricInfoV: the GPU is on no NVLink fabric");
  }
  FabricInfo info{raw.state, raw.status, raw.cliqueId, raw.healthMask, {}};
  auto flag = [&](unsigned shift) -> std::optional<bool> {
    const unsigned value = (raw.healthMask >> shift) & kFabricFlagWidthMask;
    if (value != kFabricFlagTrue && value != kFabricFlagFalse) return std::nullopt;
    return value == kFabricFlagTrue;
  };
  info.degraded_bandwidth = flag(kFabricDegradedBwShift);
  info.route_recovery = flag(kFabricRouteRecoveryShift);
  info.route_unhealthy = flag(kFabricRouteUnhealthyShift);
  info.access_timeout_recovery = flag(kFabricAccessTimeoutRecoveryShift);
  const unsigned config = (raw.healthMask >> kFabricIncorrectConfigShift) & kFabricConfigWidthMask;
  if (config != 0) info.incorrect_configuration = config;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) info.cluster_uuid += '-';
    info.cluster_uuid += kHex[raw.clusterUuid[i] >> 4];
    info.cluster_uuid += kHex[raw.clusterUuid[i] & 0xF];
  }
  return info;
}

Result<UtilizationRates> Device::Utilization() const {
  nvmlUtilization_t raw{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetUtilizationRates), &raw));
  return UtilizationRates{raw.gpu, raw.memory};
}

Result<MemoryInfo> Device::Memory() const {
  nvmlMemory_v2_t v2{};
  v2.version = kMemoryV2Version;
  const int rc = Invoke(&Api::nvmlDeviceGetMemoryInfo_v2, &v2);
  if (rc == kSuccess) return MemoryInfo{v2.total, v2.reserved, v2.free, v2.used};
  // Drivers before R510 (or refusing the version) answer with v1 only.
  if (rc != kFunctionNotFound && rc != kArgumentVersionMismatch && rc != kNotSupported) {
    return lib_->Check(rc, "nvmlDeviceGetMemoryInfo_v2", label_);
  }
  nvmlMemory_t v1{};
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetMemoryInfo), &v1));
  return MemoryInfo{v1.total, std::nullopt, v1.free, v1.used};
}

Result<CodecUtilization> Device::EncoderUtilization() const {
  CodecUtilization u;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetEncoderUtilization), &u.percent, &u.sampling_period_us));
  return u;
}
Result<CodecUtilization> Device::DecoderUtilization() const {
  CodecUtilization u;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetDecoderUtilization), &u.percent, &u.sampling_period_us));
  return u;
}

Result<uint32_t> Device::Temperature() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetTemperature),
                                 static_cast<int>(kTemperatureGpu));
}
Result<uint32_t> Device::TemperatureThreshold(TempThreshold kind) const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetTemperatureThreshold), Raw(kind));
}

Result<uint32_t> Device::PowerUsageMilliwatts() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetPowerUsage));
}
Result<uint64_t> Device::TotalEnergyMillijoules() const {
  return Get<uint64_t, unsigned long long>(GPUSCOPE_NVML_FN(nvmlDeviceGetTotalEnergyConsumption));
}
Result<uint32_t> Device::EnforcedPowerLimit() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetEnforcedPowerLimit));
}
Result<uint32_t> Device::PowerManagementLimit() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetPowerManagementLimit));
}
Result<uint32_t> Device::DefaultPowerLimit() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetPowerManagementDefaultLimit));
}
Result<PowerLimitRange> Device::PowerLimitConstraints() const {
  PowerLimitRange range;
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetPowerManagementLimitConstraints),
                                &range.min_mw, &range.max_mw));
  return range;
}

Result<uint32_t> Device::Clock(ClockDomain domain) const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetClockInfo), Raw(domain));
}
Result<uint32_t> Device::MaxClock(ClockDomain domain) const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetMaxClockInfo), Raw(domain));
}

Result<uint64_t> Device::ClockReasons() const {
  // R535 renamed throttle reasons to clock event reasons; the bits are the same.
  if (lib_->api().nvmlDeviceGetCurrentClocksEventReasons != nullptr) {
    return Get<uint64_t, unsigned long long>(
        GPUSCOPE_NVML_FN(nvmlDeviceGetCurrentClocksEventReasons));
  }
  return Get<uint64_t, unsigned long long>(
      GPUSCOPE_NVML_FN(nvmlDeviceGetCurrentClocksThrottleReasons));
}
Result<uint64_t> Device::SupportedClockReasons() const {
  return Get<uint64_t, unsigned long long>(
      GPUSCOPE_NVML_FN(nvmlDeviceGetSupportedClocksThrottleReasons));
}

Result<uint32_t> Device::FanSpeed() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetFanSpeed));
}
Result<int> Device::PerformanceState() const {
  return Get<int>(GPUSCOPE_NVML_FN(nvmlDeviceGetPerformanceState));
}

Result<uint32_t> Device::PcieThroughput(PcieDirection direction) const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetPcieThroughput), Raw(direction));
}
Result<uint32_t> Device::PcieReplayCounter() const {
  return Get<uint32_t, unsigned>(GPUSCOPE_NVML_FN(nvmlDeviceGetPcieReplayCounter));
}
Result<PcieLinkInfo> Device::PcieLink() const {
  PcieLinkInfo link;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetCurrPcieLinkGeneration), &link.gen_current));
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetCurrPcieLinkWidth), &link.width_current));
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetMaxPcieLinkGeneration), &link.gen_max));
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetMaxPcieLinkWidth), &link.width_max));
  return link;
}

Result<uint64_t> Device::TotalEccErrors(EccKind kind, EccScope scope) const {
  return Get<uint64_t, unsigned long long>(GPUSCOPE_NVML_FN(nvmlDeviceGetTotalEccErrors), Raw(kind),
                                           Raw(scope));
}
Result<uint64_t> Device::MemoryErrorCounter(EccKind kind, EccScope scope,
                                            EccLocation location) const {
  return Get<uint64_t, unsigned long long>(GPUSCOPE_NVML_FN(nvmlDeviceGetMemoryErrorCounter),
                                           Raw(kind), Raw(scope), Raw(location));
}
Result<EccModeInfo> Device::EccMode() const {
  int current = 0;
  int pending = 0;
  GPUSCOPE_RETURN_IF_ERROR(Call(GPUSCOPE_NVML_FN(nvmlDeviceGetEccMode), &current, &pending));
  return EccModeInfo{current == kEnabled, pending == kEnabled};
}

Result<uint32_t> Device::RetiredPagesCount(PageRetireCause cause) const {
  // Ask with room for nothing: NVML answers the count (INSUFFICIENT_SIZE) or
  // SUCCESS when there are none; then read them to confirm the count.
  unsigned count = 0;
  int rc = Invoke(&Api::nvmlDeviceGetRetiredPages, Raw(cause), &count,
                  static_cast<unsigned long long*>(nullptr));
  for (int attempt = 0; rc == kInsufficientSize && attempt < 3; ++attempt) {
    std::vector<unsigned long long> addresses(count + 8);
    count = static_cast<unsigned>(addresses.size());
    rc = Invoke(&Api::nvmlDeviceGetRetiredPages, Raw(cause), &count, addresses.data());
  }
  GPUSCOPE_RETURN_IF_ERROR(lib_->Check(rc, "nvmlDeviceGetRetiredPages", label_));
  return count;
}
Result<bool> Device::RetiredPagesPending() const {
  return Get<bool, int>(GPUSCOPE_NVML_FN(nvmlDeviceGetRetiredPagesPendingStatus));
}
Result<RemappedRowsInfo> Device::RemappedRows() const {
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      Call(GPUSCOPE_NVML_FN(nvmlDeviceGetRemappedRows), &corr, &unc, &pending, &failure));
  return RemappedRowsInfo{corr, unc, pending != 0, failure != 0};
}

Result<bool> Device::NvLinkState(unsigned link) const {
  return Get<bool, int>(GPUSCOPE_NVML_FN(nvmlDeviceGetNvLinkState), link);
}
Result<uint64_t> Device::NvLinkErrorCounter(unsigned link, NvLinkCounter counter) const {
  return Get<uint64_t, unsigned long long>(GPUSCOPE_NVML_FN(nvmlDeviceGetNvLinkErrorCounter), link,
                                           Raw(counter));
}

Result<bool> Device::GpmSupported() const {
  nvmlGpmSupport_t support{};
  support.version = kGpmSupportVersion;
  const Device gpu = Parent();
  GPUSCOPE_RETURN_IF_ERROR(gpu.Call(GPUSCOPE_NVML_FN(nvmlGpmQueryDeviceSupport), &support));
  return support.isSupportedDevice != 0;
}

}  // namespace gpuscope::nvml
