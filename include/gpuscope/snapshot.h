// What the sampler publishes: immutable snapshots of every GPU's identity and
// latest values, plus a trailing window of recent samples for analysis.
//
// Contract: a Snapshot is built by the sampler, then published once as a
// shared_ptr<const Snapshot>; after that nobody mutates it, so readers (HTTP
// scrapes, the CLI, analysis, health) share it without locks. Values are in
// the catalog's stored units (see catalog.h); a metric that is unsupported or
// failed to read is absent (present bit clear), never zero.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/catalog.h"

namespace gpuscope {

// Driver-wide facts, read once at start.
struct SystemInfo {
  std::string driver_version;  // "570.133.20"
  std::string nvml_version;    // "12.570.133.20"
  std::string cuda_version;    // "12.8"
  std::string hostname;
};

// One GPU (or MIG instance), probed once at attach. Capabilities say what the
// device answered at probe time, so the sampler never asks for what is absent.
struct GpuInfo {
  unsigned index = 0;  // NVML index; for a MIG instance, the parent's
  std::string uuid;    // "GPU-..."; for MIG, the parent's (dcgm-exporter labels)
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string serial;
  std::string pci_bus_id;  // "00000000:18:00.0"
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0;
  unsigned pci_device_id = 0;  // device id << 16 | vendor id
  unsigned pci_sub_system_id = 0;
  unsigned minor_number = 0;       // /dev/nvidia<minor>
  std::string architecture;        // "Hopper"
  std::string compute_capability;  // "9.0"
  std::string vbios_version;
  std::string brand;                                                        // "Tesla"
  std::optional<std::string> persistence_mode, display_mode, compute_mode;  // as nvidia-smi prints
  std::optional<std::string> power_management_mode;  // "Enabled" / "Disabled"
  unsigned nvlink_count = 0;                         // links that answered at probe time
  bool gpm_supported = false;
  bool mig_enabled = false;              // MIG mode current
  bool mig_capable = false;              // the GPU answers MIG mode queries
  std::optional<bool> mig_mode_pending;  // MIG mode after the next reset; absent without MIG
  // MIG instance identity (empty for a whole GPU).
  std::optional<unsigned> gpu_instance_id, compute_instance_id;
  std::string mig_uuid;     // "MIG-..."
  std::string mig_profile;  // "1g.10gb"
  // InfoROM object versions ("" when the board has none or NVML cannot tell).
  std::string inforom_image, inforom_oem, inforom_ecc, inforom_power;

  bool is_mig() const { return gpu_instance_id.has_value(); }
};

// Which of NVML's process lists name a process (a process may be on several).
enum ProcessKind : uint8_t {
  kComputeProcess = 1,   // nvmlDeviceGetComputeRunningProcesses
  kGraphicsProcess = 2,  // nvmlDeviceGetGraphicsRunningProcesses
  kMpsProcess = 4,       // nvmlDeviceGetMPSComputeRunningProcesses (an MPS client)
};

struct ProcessInfo {
  unsigned pid = 0;
  std::string name;
  std::optional<uint64_t> used_memory_bytes;  // absent when the driver hides it
  std::optional<unsigned> gpu_instance_id, compute_instance_id;
  uint8_t kinds = kComputeProcess;  // ProcessKind bits
  // From nvmlDeviceGetProcessUtilization over the last slow period, in [0, 1];
  // absent when the driver gave no sample for the process (MIG, or idle).
  std::optional<double> sm_utilization, memory_utilization;
  // The process's share of the GPU's SM time over the last slow period, in
  // [0, 1]: its samples' SM utilization summed over the periods NVML sampled
  // (a period it did not run in counts 0). Set, 0 included, for every process
  // when GpuSample::process_sm_measured; absent otherwise.
  std::optional<double> sm_share;

  bool Is(ProcessKind kind) const { return (kinds & kind) != 0; }
};

// One virtual GPU of a VM on a vGPU host board (nvmlDeviceGetActiveVgpus),
// read in the slow tier. Utilizations are the board's time the scheduler gave
// the instance, in [0, 1]; absent when NVML gave no sample this period.
struct VgpuInstance {
  uint32_t id = 0;      // NVML's vGPU instance id
  std::string uuid;     // the vGPU's UUID ("" when NVML cannot tell)
  std::string vm_id;    // nvmlVgpuInstanceGetVmID: the VM's UUID, or its domain id
  std::string vm_name;  // from the hypervisor where gpuscope can tell; else ""
  std::string type;     // vGPU type, "GRID H100-20C"
  std::optional<uint64_t> fb_total_bytes, fb_used_bytes;
  std::optional<unsigned> license_state;  // NVML_GRID_LICENSE_STATE_*: 5 licensed
  std::optional<double> sm_utilization, memory_utilization, encoder_utilization,
      decoder_utilization;

  // The VM as attribution names it: its name, else its id.
  const std::string& vm() const { return vm_name.empty() ? vm_id : vm_name; }
};

// Per-link NVLink health counters.
struct NvLinkLink {
  unsigned link = 0;
  bool active = false;
  std::optional<uint64_t> replay, recovery, crc_flit, crc_data;
};

enum class GpuState : uint8_t {
  kOk,     // the last cycle read it
  kLost,   // GPU_IS_LOST: series stop until it returns
  kStale,  // a call hangs; values are the last good ones
  kError,  // the last cycle failed for another reason
};

// The latest values of one GPU.
struct GpuSample {
  std::array<double, kMetricCount> values{};
  std::bitset<kMetricCount> present;
  GpuState state = GpuState::kOk;
  std::string state_reason;  // why not kOk, for /health and logs
  double sampled_at = 0;     // unix seconds of the last successful read
  std::vector<NvLinkLink> nvlink;
  // The NVLink fabric's cluster UUID (gpuscope_fabric_info); empty off a fabric.
  std::string fabric_cluster_uuid;
  std::map<unsigned, uint64_t> xid_counts;  // XID code -> count since start
  std::vector<ProcessInfo> processes;
  // nvmlDeviceGetProcessUtilization answered at the last slow read, so each
  // process's sm_share is measured. False on MIG (NVML gives none), where the
  // driver does not support it, and while the device has no processes.
  bool process_sm_measured = false;
  // On a vGPU host board: its virtual GPUs (slow tier), and the vGPU
  // scheduler's policy (1 best effort, 2 equal share, 3 fixed share; absent
  // when NVML does not say).
  std::vector<VgpuInstance> vgpus;
  std::optional<unsigned> vgpu_scheduler_policy;
  // (call, NVML return code name) -> failed calls since start; NOT_SUPPORTED
  // (absence) and GPU_IS_LOST (state kLost) are not counted.
  std::map<std::pair<std::string, std::string>, uint64_t> call_errors;

  bool Has(Metric m) const { return present.test(Index(m)); }
  double Get(Metric m) const { return values[Index(m)]; }
  std::optional<double> Find(Metric m) const {
    return Has(m) ? std::optional<double>(Get(m)) : std::nullopt;
  }
  void Set(Metric m, double v) {
    values[Index(m)] = v;
    present.set(Index(m));
  }
  void Clear(Metric m) { present.reset(Index(m)); }

  // A vGPU host board: virtualization mode 3 (NVML's HOST_VGPU), or virtual
  // GPUs seen on it.
  bool HostsVgpus() const { return Find(Metric::kVirtualizationMode) == 3 || !vgpus.empty(); }
};

struct Attribution;  // gpuscope/attribution.h: whose work each device serves

struct Snapshot {
  uint64_t sequence = 0;        // increments per published cycle
  double timestamp = 0;         // unix seconds the cycle finished
  double collect_seconds = 0;   // how long the cycle took
  uint64_t overruns_total = 0;  // cycles since start that ran past the next tick (late starts)
  bool nvml_up = false;
  std::string nvml_error;         // one sentence when !nvml_up
  uint64_t nvml_calls = 0;        // NVML calls the cycle made (all GPUs)
  uint64_t nvml_calls_total = 0;  // NVML calls since the sampler started
  bool slow_cycle = false;        // the slow tier (ECC, limits, processes) was read this cycle
  SystemInfo system;
  std::vector<GpuInfo> gpus;  // parallel to samples
  std::vector<GpuSample> samples;
  // Pods and jobs per device, set by whoever attributes (serve's exporter,
  // the CLI commands) on its copy; null: nobody asked.
  std::shared_ptr<const Attribution> attribution;
};
using SnapshotPtr = std::shared_ptr<const Snapshot>;

}  // namespace gpuscope
