// nvml::Device: one GPU or MIG device, with typed getters that return project
// types (no NVML C types here). Every getter returns a Result: kNotSupported
// when the driver lacks the symbol or NVML says NOT_SUPPORTED, other codes as
// documented in library.h (ReturnCodeOf/IsGpuLost give the exact NVML code).
// Units are NVML's: milliwatts, millijoules, MHz, Celsius, KB/s, bytes.
//
// A Device is a cheap value (a borrowed Library pointer and a handle); copies
// share the same GPU. Thread safety: all methods are const and may be called
// from any thread; the Library must outlive every Device.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::nvml {

class Library;
struct Api;

// Selectors; the values are NVML's.
enum class ClockDomain { kGraphics = 0, kSm = 1, kMemory = 2, kVideo = 3 };
enum class TempThreshold { kShutdown = 0, kSlowdown = 1, kMemoryMax = 2, kGpuMax = 3 };
enum class PcieDirection { kTx = 0, kRx = 1 };
enum class EccKind { kCorrected = 0, kUncorrected = 1 };
enum class EccScope { kVolatile = 0, kAggregate = 1 };
enum class EccLocation {
  kL1 = 0,
  kL2 = 1,
  kDram = 2,
  kRegisterFile = 3,
  kTexture = 4,
  kTextureShm = 5,
  kCbu = 6,
  kSram = 7,
};
enum class PageRetireCause { kMultipleSbe = 0, kDbe = 1 };
enum class NvLinkCounter { kReplay = 0, kRecovery = 1, kCrcFlit = 2, kCrcData = 3, kEccData = 4 };

struct PciInfo {
  std::string bus_id;  // "00000000:18:00.0"
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t pci_device_id = 0;  // device id << 16 | vendor id
  uint32_t pci_sub_system_id = 0;
};
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};
struct UtilizationRates {
  uint32_t gpu_percent = 0;
  uint32_t memory_percent = 0;
};
struct MemoryInfo {
  uint64_t total_bytes = 0;
  std::optional<uint64_t> reserved_bytes;  // nullopt on drivers without _v2
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
};
struct CodecUtilization {
  uint32_t percent = 0;
  uint32_t sampling_period_us = 0;
};
struct PowerLimitRange {
  uint32_t min_mw = 0;
  uint32_t max_mw = 0;
};
struct PcieLinkInfo {
  uint32_t gen_current = 0;
  uint32_t width_current = 0;
  uint32_t gen_max = 0;
  uint32_t width_max = 0;
};
struct Bar1Memory {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
};
// The GPU's place in an NVLink fabric (GB200 NVL72, NVSwitch systems):
// nvmlDeviceGetGpuFabricInfoV, version 2. health_mask packs 2-bit flags and a
// 4-bit configuration code (nvml/abi.h, FabricHealthShift).
struct FabricInfo {
  uint32_t state = 0;        // nvml::FabricState: 1 not started, 2 in progress, 3 completed
  int status = 0;            // nvmlReturn_t of a completed registration; 0 success
  uint32_t clique_id = 0;    // the fabric partition the GPU belongs to
  uint32_t health_mask = 0;  // NVML_GPU_FABRIC_HEALTH_MASK_*
  std::string cluster_uuid;  // "8-4-4-4-12" lower-case hex
  // The mask's flags; nullopt where the driver does not report one.
  std::optional<bool> degraded_bandwidth, route_recovery, route_unhealthy, access_timeout_recovery;
  // 1 none, 2 incorrect system GUID, 3 incorrect chassis serial, 4 no
  // partition, 5 insufficient NVLinks; nullopt: not reported.
  std::optional<uint32_t> incorrect_configuration;
};
// The InfoROM: per-object versions ("" when the board has none) and the
// configuration checksum.
struct InforomInfo {
  std::string image;  // "G520.0200.00.05"
  std::string oem;
  std::string ecc;
  std::string power;
};
struct EccModeInfo {
  bool current = false;
  bool pending = false;
};
struct RemappedRowsInfo {
  uint32_t correctable = 0;
  uint32_t uncorrectable = 0;
  bool pending = false;
  bool failure = false;
};
struct MigModeInfo {
  bool current = false;
  bool pending = false;
};
struct MigAttributes {
  uint32_t multiprocessor_count = 0;
  uint32_t shared_copy_engine_count = 0;
  uint32_t shared_decoder_count = 0;
  uint32_t shared_encoder_count = 0;
  uint32_t shared_jpeg_count = 0;
  uint32_t shared_ofa_count = 0;
  uint32_t gpu_instance_slice_count = 0;
  uint32_t compute_instance_slice_count = 0;
  uint64_t memory_mb = 0;
};
struct Process {
  uint32_t pid = 0;                           // host pid
  std::optional<uint64_t> used_memory_bytes;  // nullopt when NVML cannot tell
  std::optional<uint32_t> gpu_instance_id;    // nullopt when not on MIG
  std::optional<uint32_t> compute_instance_id;
};
struct ProcessUtilizationSample {
  uint32_t pid = 0;
  uint64_t timestamp_us = 0;
  uint32_t sm_percent = 0;
  uint32_t memory_percent = 0;
  uint32_t encoder_percent = 0;
  uint32_t decoder_percent = 0;
};
// One entry of a batched field read; scope_id is the NVLink id for link fields.
struct FieldRequest {
  uint32_t field_id = 0;
  uint32_t scope_id = 0;
};
struct FieldValue {
  std::variant<double, int64_t, uint64_t> value;
  int64_t timestamp_us = 0;
  double AsDouble() const {
    return std::visit([](auto v) { return static_cast<double>(v); }, value);
  }
};

// nvmlGpuVirtualizationMode_t values the agent acts on.
inline constexpr int kVirtualizationGuestVgpu = 2;    // this GPU is a VM's virtual GPU
inline constexpr int kVirtualizationHostOfVgpus = 3;  // this board hosts virtual GPUs
// NVML_GRID_LICENSE_STATE_* as the agent reports them.
inline constexpr unsigned kGuestLicenseUnknown = 0, kGuestLicenseGrace = 2,
                          kGuestLicenseRestricted = 3, kGuestLicenseUnlicensed = 4,
                          kGuestLicenseLicensed = 5;
// NVIDIA's vGPU licensing: an unlicensed vGPU keeps full capability for 20
// minutes, then runs restricted.
inline constexpr double kVgpuLicenseGraceSeconds = 20 * 60;

// vGPU, host side: one virtual GPU of a VM on this board. Each part is
// nullopt when its call failed or is unsupported.
struct VgpuInstanceInfo {
  uint32_t id = 0;    // NVML's instance id
  std::string uuid;   // "" when NVML cannot tell
  std::string vm_id;  // nvmlVgpuInstanceGetVmID: a domain id or the VM's UUID
  bool vm_id_is_uuid = false;
  std::string type_name;  // "GRID H100-20C"
  std::optional<uint64_t> fb_total_bytes, fb_used_bytes;
  std::optional<uint32_t> license_state;  // NVML_GRID_LICENSE_STATE_*: 5 licensed
};
struct VgpuUtilizationSample {
  uint32_t id = 0;
  uint64_t timestamp_us = 0;
  double sm_percent = 0, memory_percent = 0, encoder_percent = 0, decoder_percent = 0;
};
struct VgpuProcessSample {
  uint32_t id = 0;   // the instance
  uint32_t pid = 0;  // in the guest
  std::string name;
  uint64_t timestamp_us = 0;
  uint32_t sm_percent = 0, memory_percent = 0;
};
struct VgpuSchedulerState {
  uint32_t policy = 0;        // 1 best effort, 2 equal share, 3 fixed share
  uint32_t timeslice_ns = 0;  // nvml.h: "the timeslice in ns"
};
// One software runlist's latest slice in the vGPU scheduler's log: its run
// and preempted (waiting) totals, ns.
struct VgpuRunlistLog {
  uint32_t runlist = 0;
  uint64_t first_timestamp_ns = 0, last_timestamp_ns = 0;  // its entries' span in the log
  uint64_t run_ns = 0;        // timeRunTotal, newest minus oldest entry (plus the oldest slice)
  uint64_t preempted_ns = 0;  // cumulativePreemptionTime, newest minus oldest entry
  uint64_t target_slice_ns = 0;
};
// vGPU, guest side: the licence of this virtual GPU's licensed feature.
struct GuestLicense {
  bool licensed = false;
  std::optional<int64_t> expires_unix;  // when NVML gives a valid expiry date
  bool permanent = false;
  std::string product;  // "NVIDIA Virtual Compute Server"
};

class Device {
 public:
  // NVML index of the GPU (of the parent GPU for a MIG device).
  unsigned index() const { return index_; }
  // "GPU 3", or "GPU 3 MIG 1" (slot 1 of GPU 3), used in error messages.
  const std::string& label() const { return label_; }
  bool is_mig() const { return parent_ != nullptr; }
  std::optional<unsigned> mig_slot() const { return mig_slot_; }
  std::optional<unsigned> gpu_instance_id() const { return gpu_instance_id_; }
  std::optional<unsigned> compute_instance_id() const { return compute_instance_id_; }
  // The GPU a MIG device lives on; itself for a GPU.
  Device Parent() const;

  // Identity.
  Result<std::string> Name() const;
  Result<std::string> Uuid() const;
  Result<std::string> Serial() const;
  Result<std::string> VbiosVersion() const;
  Result<PciInfo> Pci() const;
  Result<uint32_t> MinorNumber() const;   // /dev/nvidia<minor>
  Result<uint32_t> Architecture() const;  // NVML's number: 7 Ampere, 9 Hopper, 10 Blackwell
  Result<int> Brand() const;
  Result<ComputeCapability> CudaComputeCapability() const;
  Result<bool> PersistenceMode() const;
  Result<bool> DisplayMode() const;
  Result<int> ComputeMode()
      const;  // 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process
  Result<bool> PowerManagementMode() const;
  // nvmlGpuVirtualizationMode_t: 0 none, 1 pass-through, 2 vGPU, 3 host vGPU, 4 host vSGA.
  Result<int> VirtualizationMode() const;
  // Versions of the InfoROM objects; an object the board lacks reads "".
  InforomInfo Inforom() const;
  Result<uint32_t> InforomChecksum() const;
  // True when the InfoROM's checksum is valid (NVML_ERROR_CORRUPTED_INFOROM: false).
  Result<bool> InforomValid() const;

  // Telemetry.
  Result<UtilizationRates> Utilization() const;
  Result<MemoryInfo> Memory() const;
  Result<Bar1Memory> Bar1() const;
  // kNotSupported off a fabric (the call refused, or state NOT_SUPPORTED).
  Result<FabricInfo> Fabric() const;
  Result<CodecUtilization> EncoderUtilization() const;
  Result<CodecUtilization> DecoderUtilization() const;
  Result<uint32_t> Temperature() const;  // GPU sensor
  Result<uint32_t> TemperatureThreshold(TempThreshold kind) const;
  Result<uint32_t> PowerUsageMilliwatts() const;
  Result<uint64_t> TotalEnergyMillijoules() const;
  Result<uint32_t> EnforcedPowerLimit() const;  // mW, likewise the next three
  Result<uint32_t> PowerManagementLimit() const;
  Result<uint32_t> DefaultPowerLimit() const;
  Result<PowerLimitRange> PowerLimitConstraints() const;
  Result<uint32_t> Clock(ClockDomain domain) const;
  Result<uint32_t> MaxClock(ClockDomain domain) const;
  // Clock event (throttle) reason bits: 0x1 idle, 0x4 SW power cap, 0x8 HW slowdown, ...
  Result<uint64_t> ClockReasons() const;
  Result<uint64_t> SupportedClockReasons() const;
  Result<uint32_t> FanSpeed() const;
  Result<int> PerformanceState() const;                            // 0..15, 32 unknown
  Result<uint32_t> PcieThroughput(PcieDirection direction) const;  // KB/s; a slow call (20 ms)
  Result<uint32_t> PcieReplayCounter() const;
  Result<PcieLinkInfo> PcieLink() const;

  // Health.
  Result<uint64_t> TotalEccErrors(EccKind kind, EccScope scope) const;
  Result<uint64_t> MemoryErrorCounter(EccKind kind, EccScope scope, EccLocation location) const;
  Result<EccModeInfo> EccMode() const;
  Result<uint32_t> RetiredPagesCount(PageRetireCause cause) const;
  Result<bool> RetiredPagesPending() const;
  Result<RemappedRowsInfo> RemappedRows() const;
  Result<bool> NvLinkState(unsigned link) const;  // true = active
  Result<uint64_t> NvLinkErrorCounter(unsigned link, NvLinkCounter counter) const;
  // Links the GPU has: field 91 when the driver knows it, else a walk of
  // link ids until NVML refuses one.
  Result<uint32_t> NvLinkCount() const;

  // Processes.
  Result<std::vector<Process>> ComputeProcesses() const;
  Result<std::vector<Process>> GraphicsProcesses() const;
  // The clients of an MPS server (the server itself is a compute process).
  Result<std::vector<Process>> MpsComputeProcesses() const;
  // Samples newer than last_seen_us (0 = all NVML keeps); empty when none.
  Result<std::vector<ProcessUtilizationSample>> ProcessUtilization(uint64_t last_seen_us) const;

  // One batched read; one Result per request, in order. Unknown or
  // unsupported fields fail on their own entry only.
  std::vector<Result<FieldValue>> FieldValues(std::span<const FieldRequest> requests) const;

  // MIG.
  Result<MigModeInfo> MigMode() const;
  Result<uint32_t> MaxMigDeviceCount() const;
  // The MIG devices that exist on this GPU (empty slots skipped).
  Result<std::vector<Device>> MigDevices() const;
  Result<MigAttributes> Attributes() const;  // on a MIG device

  // vGPU host: the board's active virtual GPUs and their use.
  Result<int> HostVgpuMode() const;  // 0 non-SR-IOV, 1 SR-IOV
  Result<std::vector<uint32_t>> ActiveVgpus() const;
  // Identity, framebuffer and licence of one instance; fails only when the
  // instance is gone (NOT_FOUND) or NVML is, the parts fail alone.
  Result<VgpuInstanceInfo> VgpuInstance(uint32_t id) const;
  // Samples newer than last_seen_us; empty when none.
  Result<std::vector<VgpuUtilizationSample>> VgpuUtilization(uint64_t last_seen_us) const;
  Result<std::vector<VgpuProcessSample>> VgpuProcessUtilization(uint64_t last_seen_us) const;
  Result<VgpuSchedulerState> VgpuScheduler() const;
  // nvmlDeviceGetVgpuSchedulerLog: per runlist what its entries in the log
  // (the last 200 slices) add up to (device_vgpu_scheduler.cc).
  Result<std::vector<VgpuRunlistLog>> VgpuSchedulerLog() const;
  // vGPU guest: the licence (NOT_SUPPORTED off a guest).
  Result<GuestLicense> GridLicense() const;

  // GPM (Hopper+): whether the GPU (the parent, for MIG) supports it.
  Result<bool> GpmSupported() const;

 private:
  friend class Library;
  friend class GpmSampler;
  friend class EventSet;

  Device(const Library* lib, void* handle, unsigned index);
  // The raw handle (an nvmlDevice_t).
  void* handle() const { return handle_; }

  // The one path from a Device into NVML (defined in device_call.h): the
  // device handle goes first, then `args`.
  template <typename Fn, typename... Args>
  int Invoke(Fn Api::*fn, Args... args) const;
  template <typename Fn, typename... Args>
  Status Call(Fn Api::*fn, const char* name, Args... args) const;
  template <typename Out, typename Raw = Out, typename Fn, typename... Args>
  Result<Out> Get(Fn Api::*fn, const char* name, Args... args) const;
  template <typename Fn>
  Result<std::string> GetString(Fn Api::*fn, const char* name, unsigned size) const;
  Result<Device> MigDeviceAt(unsigned slot) const;
  template <typename Fn>
  Result<std::vector<Process>> RunningProcesses(Fn Api::*fn, const char* name) const;

  const Library* lib_ = nullptr;
  void* handle_ = nullptr;
  unsigned index_ = 0;
  std::string label_;
  void* parent_ = nullptr;  // the parent GPU's handle, for a MIG device
  std::optional<unsigned> mig_slot_;
  std::optional<unsigned> gpu_instance_id_;
  std::optional<unsigned> compute_instance_id_;
};

}  // namespace gpuscope::nvml
