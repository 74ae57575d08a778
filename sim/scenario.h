// Scenario: what the simulated node looks like and does over time (GPUs,
// workloads, processes, MIG, faults). ParseScenario is a pure function of the
// YAML text; reading the file is separate. The schema is in sim/README.md.
//
// Thread safety: a parsed Scenario is an immutable value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faults.h"
#include "gpuscope/status.h"
#include "presets.h"

namespace gpuscope::sim {

// How long the driver has run before scenario time 0: counters since the
// driver loaded (energy, violation times, replays, NVLink) start from what
// that history left. Three days by default.
constexpr double kDefaultDriverUptimeS = 3 * 86400.0;

enum class WorkloadKind { kIdle, kTraining, kInference, kCustom };

// Activity levels are fractions 0..1; traffic in MB/s (10^6 bytes/s).
struct Segment {
  double at = 0;  // scenario seconds
  WorkloadKind kind = WorkloadKind::kIdle;
  double util = 0, sm_activity = 0, sm_occupancy = 0, tensor_activity = 0;
  double dram_activity = 0, fp64_activity = 0, fp32_activity = 0, fp16_activity = 0;
  double pcie_tx_mbps = 0, pcie_rx_mbps = 0, nvlink_tx_mbps = 0, nvlink_rx_mbps = 0;
  std::optional<double> memory_used_gib;
  double period_s = 0, duty = 1, low = 0.05;      // on/off oscillation
  double noise = 0;                               // +- amplitude on activities
  std::vector<std::pair<double, double>> points;  // custom: [t since at, factor]
  bool repeat = false;                            // custom: loop the curve
  // Brief power bursts: every burst_every_s, for burst_s, power demand above
  // idle x burst_power (a step that overshoots the limit for a moment).
  double burst_every_s = 0, burst_s = 0.5, burst_power = 1.3;
};

struct ProcessSpec {
  unsigned pid = 0;
  std::string name;
  double used_memory_gib = 0;
  double start = 0, end = kForever;
  int gpu_instance = -1;  // index into GpuSpec::mig_instances, -1 none
  // Which NVML lists show it: compute, graphics, or an MPS client (the MPS list).
  bool compute = true, graphics = false, mps = false;
  double sm_share = 1;  // weight of its part of the GPU's activity in process utilization
};

struct MigInstanceSpec {
  const MigProfile* profile = nullptr;
  unsigned gpu_instance_id = 0;
};

// vGPU (sim/vgpu.cc): a board hosting virtual GPUs for VMs, or a guest's
// virtual GPU.
enum class VgpuScheduler { kBestEffort = 1, kEqualShare = 2, kFixedShare = 3 };

struct VgpuInstanceSpec {
  std::string type;                 // vGPU type name, "H100-20C" (framebuffer 20 GiB)
  unsigned long long fb_bytes = 0;  // from the type's "-<N>C" suffix
  std::string vm_id;                // what nvmlVgpuInstanceGetVmID answers (a VM UUID)
  double util = 0;                  // share of the board the VM asks for, 0..1
  double memory_used_gib = 0;
  double license_expires_at = kForever;  // scenario seconds; the host sees it lapse
  unsigned pid = 0;                      // a guest process (nvmlDeviceGetVgpuProcessUtilization)
  std::string process_name;
};

struct VgpuHostSpec {
  VgpuScheduler scheduler = VgpuScheduler::kBestEffort;
  unsigned timeslice_us = 2000;
  bool sriov = true;  // nvmlDeviceGetHostVgpuMode
  std::vector<VgpuInstanceSpec> instances;
};

struct VgpuGuestSpec {
  double license_expires_at = kForever;  // scenario seconds: unlicensed from then on
};

struct GpuSpec {
  const Preset* preset = nullptr;
  std::string uuid, serial;                        // empty: derived from seed and index
  unsigned pci_bus = 0;                            // 0: derived from index
  std::optional<unsigned> minor_number;            // /dev/nvidia<minor>; unset: the index
  double power_limit_w = 0;                        // 0: preset default
  double ambient_c = 0;                            // offset added to the preset's temperatures
  double hbm_offset_c = 0;                         // added to the memory temperature (hot HBM)
  bool pcie_parking = true;                        // the PCIe link parks at Gen1 when idle
  double driver_uptime_s = kDefaultDriverUptimeS;  // the scenario's, copied
  std::vector<Segment> workload;
  std::vector<ProcessSpec> processes;
  bool mig_enabled = false;
  std::vector<MigInstanceSpec> mig_instances;
  std::vector<FaultSpec> faults;
  std::optional<VgpuHostSpec> vgpu_host;    // key `vgpu`
  std::optional<VgpuGuestSpec> vgpu_guest;  // key `vgpu_guest`
};

struct Scenario {
  std::string source;  // file name, for messages
  uint64_t seed = 1;
  double time_scale = 1.0;
  std::string driver_version = "570.133.20";
  std::string nvml_version;  // default "12." + driver_version
  int cuda_version = 12080;
  double driver_uptime_s = kDefaultDriverUptimeS;
  std::vector<GpuSpec> gpus;  // replicas expanded
};

// Parses scenario YAML. Errors read "<source>:<line>: <problem>".
Result<Scenario> ParseScenario(const std::string& text, const std::string& source);

// Parses a gpu entry's `vgpu` and `vgpu_guest` keys (sim/scenario_vgpu.cc).
Status ParseVgpuKeys(const std::string& source, const YAML::Node& host, const YAML::Node& guest,
                     GpuSpec* gpu);

// Reads and parses a scenario file.
Result<Scenario> LoadScenarioFile(const std::string& path);

// The minor number of GPU `index` (/dev/nvidia<minor>): its minor_number, else
// its index.
unsigned MinorNumber(const GpuSpec& spec, unsigned index);

// True when driver_version is a 535 branch older than 535.98 (32-byte
// process entries).
bool IsEarly535(const std::string& driver_version);

}  // namespace gpuscope::sim
