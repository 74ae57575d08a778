// The measurements the diagnosis rules read, computed once per GPU from its
// window points and latest sample: activity levels and their spread, idle
// gaps, memory level and trend, power and clocks against their limits, clock
// reason shares, temperatures, link utilization against capacity, processes.
// Absent inputs leave the optional fields empty.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/diagnosis.h"
#include "analysis/window_stats.h"

namespace gpuscope::analysis {

// Utilization below this (ratio) counts as an idle point.
inline constexpr double kIdleUtil = 0.05;
// Below this a point is a gap in the work (a starved step).
inline constexpr double kGapUtil = 0.15;
// At or above this a point is busy.
inline constexpr double kBusyUtil = 0.5;

// What marks the start of a rule's condition in the window (Rule::onset):
// the series whose rise RiseOnset finds, or a run or trend it already has.
enum class OnsetSignal : uint8_t {
  kBusy,     // utilization at or above the compute-bound level
  kMemory,   // the leak's change point, else the fill reaching near-full
  kDram,     // DRAM (or memory copy) busy
  kThermal,  // thermal clock reasons
  kPower,    // software power cap or hardware power brake
  kLink,     // the busier link's share of its capacity
  kPcie,     // the PCIe link below its maximum width (else generation)
  kGaps,     // idle gaps in the work
  kIdleRun,  // the trailing idle run
};
inline constexpr std::size_t kOnsetSignalCount = 9;

struct LinkSignals {
  double capacity_bps = 0;  // per direction
  double mean_bps = 0;      // the busier direction's mean
  double mean_ratio = 0;    // mean_bps / capacity
  double busy_share = 0;    // share of the window the busier direction ran >= kLinkBusyPoint
  std::size_t n = 0;        // samples
};

struct Signals {
  double span_seconds = 0;  // covered by the points used
  std::size_t points = 0;
  // The span the points cover, as verdicts name it: "the window", or "the
  // last 30s" for signals over the recent span (DiagnoseOptions).
  std::string span_name = "the window";
  bool recent = false;  // the recent span, not the whole window
  bool gpm = false;     // SM activity (GPM) present
  // A MIG instance: its parent ("GPU 0"), whose clocks, temperature and power
  // its points carry (analysis/mig.h); "" for a whole GPU.
  std::string parent;

  // Time of the first and the last point (unix seconds).
  double start = 0, end = 0;
  // Since when each onset signal's condition holds: its change point, else
  // `start` (it held, or did not change, throughout the window).
  std::array<double, kOnsetSignalCount> onset{};
  double OnsetOf(OnsetSignal o) const { return onset[static_cast<std::size_t>(o)]; }

  // Activity, ratios 0..1.
  Summary util;
  // Utilization's spread without its extreme moments (TrimmedStddev by
  // kSteadyTrim): what "steady" is judged on.
  double util_spread = 0;
  std::optional<Summary> sm_active, dram_active, mem_copy;
  double idle_share = 0, gap_share = 0, busy_share = 0;
  int gap_runs = 0;   // idle gaps between busy stretches
  int work_runs = 0;  // stretches of work (utilization >= 15%) between gaps: bursts
  // The idle run that reaches the last point (0 when the last point is busy),
  // and the utilization of the points before it.
  double trailing_idle_seconds = 0;
  double load_before_idle_seconds = 0;
  Summary util_before_idle;

  // Memory, bytes.
  std::optional<double> mem_capacity, mem_used_last;
  std::optional<LinearFit> mem_trend;     // over the trailing trend span or the leak's segment
  std::optional<double> mem_trend_since;  // the leak's change point, when fitted after it
  std::optional<double> oom_eta_seconds;

  // Power and clocks over busy points.
  std::optional<double> power_mean_w, power_limit_w;
  std::optional<double> clock_mean_mhz, clock_max_mhz, clock_early_mhz, clock_late_mhz;
  // Shares of the window each reason group held the clocks (counters, else bits).
  std::optional<double> thermal_share, sw_power_share, hw_brake_share;
  bool reasons_from_counters = false;

  // Temperatures, Celsius.
  std::optional<double> temp_max, slowdown_temp;

  // A vGPU host board's scheduler (slow tier, absent elsewhere): the share of
  // their working time its virtual GPUs waited, how many ran, and its policy
  // and time slice at the last point.
  std::optional<Summary> vgpu_wait, vgpu_runlists;
  std::optional<double> vgpu_policy, vgpu_timeslice_s;
  bool vgpu_host = false;  // its framebuffer is its VMs' reservations

  // Interconnect.
  std::optional<LinkSignals> pcie, nvlink;
  // pcie_gen: the highest generation in the window (an idle link parks lower).
  std::optional<double> pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;

  // Processes holding memory.
  std::size_t process_count = 0;
  double held_bytes = 0;
  // Their summed SM utilization over the driver's last sampling period
  // (nvmlDeviceGetProcessUtilization), 0..1; absent without samples.
  std::optional<double> process_sm;
};

// The points within `window` seconds of the last one, and a bucket that
// straddles that start: a suffix of `points`, not a copy.
std::span<const WindowPoint> TrailingPoints(std::span<const WindowPoint> points, double window);

// Bytes the GPU's processes hold: their sizes, else (sizes or processes
// hidden) the GPU's used memory; nullopt when neither is known. What the idle
// rules and serve's idle-held counter call held (kHeldMinBytes).
std::optional<double> HeldBytes(const GpuSample& sample);

Signals ComputeSignals(const GpuInfo& info, std::span<const WindowPoint> points,
                       const GpuSample& latest, const DiagnoseOptions& options);

// The signals of the recent horizons of `points` (already trimmed to the
// window): its trailing options.recent_seconds and the half of that, each
// named "the last 1m00s" and with the options the rules should judge it by
// (window_seconds = that span). Empty when the recent span is off; a horizon
// is left out where the points cover no more than it.
struct RecentSignals {
  Signals signals;
  DiagnoseOptions options;
};
std::vector<RecentSignals> ComputeRecentSignals(const GpuInfo& info,
                                                std::span<const WindowPoint> points,
                                                const GpuSample& latest,
                                                const DiagnoseOptions& options);

// PCIe bytes per second per direction of one link: generation x lanes.
double PcieCapacityBytesPerSecond(unsigned gen, unsigned width);
// NVLink GB/s per link per direction for an architecture name ("Hopper").
double NvLinkGbpsPerLink(const std::string& architecture);

// The vGPU scheduler's signals of a host board (signals_vgpu.cc; nothing
// elsewhere): its wait ratio and runlists over the window, its policy and
// time slice at the end.
void VgpuSchedulerSignals(std::span<const WindowPoint> points, const GpuSample& latest, Signals& s);

}  // namespace gpuscope::analysis
