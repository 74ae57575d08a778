// Internal to src/collect: one reader per catalog Source. Each reader fills
// the catalog metrics naming its source, in the catalog's stored units, when
// their tier is due in the context's Reading and the device has not refused
// the call. Fallback readers (energy, ECC, remapped rows, retired pages, PCIe
// replays) run only for metrics whose field id the device refused.
//
// Thread safety: called on the one worker thread reading the device.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "collect/read_context.h"
#include "nvml/gpm.h"

namespace gpuscope::collect {

// GPM sampler of one device; metrics come from two consecutive fast reads.
// A fast read too soon after the last GPM sample (NVML wants > 100 ms, and -c
// 100 jitters around it) repeats the last values, so a series never flickers.
struct GpmState {
  std::unique_ptr<nvml::GpmSampler> sampler;
  double last_sample_t = -1;                           // Reading::t of the newest GPM sample
  bool pcie_from_gpm = false;                          // the last GPM read gave PCIe rates
  std::vector<std::pair<Metric, double>> last_values;  // of the newest GPM read
};

// What the process reader keeps across slow cycles.
struct ProcessState {
  // Newest nvmlDeviceGetProcessUtilization timestamp seen: the next read asks
  // only for newer samples, so each read averages one slow period.
  uint64_t last_seen_us = 0;
};

// Minimum spacing of two GPM samples (NVML wants > 100 ms).
inline constexpr double kGpmMinSpacingSeconds = 0.1;

// What the vGPU reader keeps across slow cycles: the newest utilization
// timestamp seen, so each read averages one slow period.
struct VgpuState {
  uint64_t last_seen_us = 0;
};

// What ReadAll reads besides the catalog metrics.
struct ReadPlan {
  unsigned nvlink_links = 0;  // per-link state and error counters (slow tier)
  bool processes = true;      // running processes with names (slow tier)
};

// Runs the reader of every catalog Source (readers_table.cc) for the tiers of
// ctx.reading(), then the slow-tier extras of `plan`.
void ReadAll(ReadContext& ctx, GpmState& gpm, ProcessState& processes, VgpuState& vgpus,
             const ReadPlan& plan);

// kFieldValue and kNvLinkThroughput rows, one batch; ids, scopes and units
// come from each row's FieldRead.
void ReadFieldValues(ReadContext& ctx);
// kNvLinkThroughput: the tx + rx total, after the batch.
void ReadNvLinkBandwidth(ReadContext& ctx);
// kFieldValue rows whose id the device refused, through their own calls.
void ReadFieldFallbacks(ReadContext& ctx);
void ReadUtilization(ReadContext& ctx);
void ReadEncoder(ReadContext& ctx);
void ReadDecoder(ReadContext& ctx);
void ReadMemoryInfo(ReadContext& ctx);
void ReadTemperature(ReadContext& ctx);
void ReadThresholds(ReadContext& ctx);
void ReadPower(ReadContext& ctx);
void ReadPowerLimits(ReadContext& ctx);
void ReadClocks(ReadContext& ctx);
void ReadMaxClocks(ReadContext& ctx);
void ReadClockEventReasons(ReadContext& ctx);
void ReadFan(ReadContext& ctx);
// readers_board.cc: board facts served as dcgm-exporter fields.
void ReadBar1(ReadContext& ctx);
void ReadModes(ReadContext& ctx);
void ReadDeviceCount(ReadContext& ctx);
void ReadInforom(ReadContext& ctx);
// In a vGPU guest (kVirtualizationMode 2, read first): the licence.
void ReadGuestLicense(ReadContext& ctx);
// On a vGPU host board: the scheduler's policy, time slice and, from its log,
// how long the virtual GPUs wait for their turn (readers_vgpu_scheduler.cc).
void ReadVgpuScheduler(ReadContext& ctx);
void ReadPerformanceState(ReadContext& ctx);
void ReadPcieLink(ReadContext& ctx);
void ReadGpm(ReadContext& ctx, GpmState& gpm);
// nvmlDeviceGetPcieThroughput, only when GPM gives no PCIe rates.
void ReadPcieThroughput(ReadContext& ctx, const GpmState& gpm);
// Fallbacks for refused field ids.
void ReadEnergyFallback(ReadContext& ctx);
void ReadEcc(ReadContext& ctx);
void ReadRemapped(ReadContext& ctx);
void ReadFabric(ReadContext& ctx);
void ReadRetired(ReadContext& ctx);
void ReadPcieReplayFallback(ReadContext& ctx);
// Slow tier: per-link NVLink state and error counters into sample.nvlink.
void ReadNvLinkLinks(ReadContext& ctx, unsigned links);
// Slow tier: the compute, graphics and MPS-client processes (merged by pid),
// with names and utilization, into sample.processes.
void ReadProcesses(ReadContext& ctx, ProcessState& state);
// Slow tier, on a vGPU host board (virtualization mode 3, read first): its
// virtual GPUs with utilization, framebuffer and licence into sample.vgpus.
void ReadVgpus(ReadContext& ctx, VgpuState& state);

// A vGPU guest's licence as NVML_GRID_LICENSE_STATE_* at unix time `now`:
// licensed; unlicensed in the grace period (20 minutes after the expiry NVML
// gives); restricted after it; unlicensed when no expiry is known.
unsigned GuestLicenseState(const nvml::GuestLicense& license, double now);

}  // namespace gpuscope::collect
