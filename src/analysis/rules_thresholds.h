// The thresholds of the diagnosis rules: each a named value with its unit
// and the reason for it. The rules (rules_*.cc) compare signals against
// `.value`; the rule table (rules_table.h) lists which rule rests on which,
// and docs/diagnosis.md's threshold table is generated from that list.
//
// Ratios are shares 0..1 (of the window, of a capacity or of a maximum);
// "points" are percentage points of a ratio's spread.
//
// Thread safety: immutable, constexpr.
#pragma once

#include <string_view>

namespace gpuscope::analysis {

struct Threshold {
  std::string_view name;  // snake_case, unique across the rules
  double value = 0;
  std::string_view unit;  // "ratio", "points", "s", "bytes", "count", "C"
  std::string_view why;   // the reason for the value, one sentence
};

// Idle and idle-held.
inline constexpr Threshold kIdleMinShare = {
    "idle_min_share", 0.9, "ratio",
    "idle when utilization stays under 5% for at least this share of the window (or for the "
    "last idle_run_seconds without a break)"};
inline constexpr Threshold kIdleRunSeconds = {
    "idle_run_seconds", 30, "s",
    "a GPU nothing holds is idle once its trailing idle run reaches this, however busy the window "
    "was before: with no memory held no job is pausing on it, so its work has ended (the half "
    "minute leaves a step of sampling cadence and still finds it within a minute)"};
inline constexpr Threshold kHeldMinBytes = {
    "held_min_bytes", 256.0 * 1024 * 1024, "bytes",
    "memory held (by processes; by the device when no process is visible) before an idle GPU "
    "counts as held: more than a bare CUDA context on every current board. A held GPU is never "
    "`idle`: it is `idle_held` once idle "
    "for idle_held_seconds without a break, else serving or pausing (no finding)"};
inline constexpr Threshold kServingMinBursts = {
    "serving_min_bursts", 3, "count",
    "a held GPU whose work comes in at least this many bursts (between idle gaps) within the "
    "window answers requests: one or two are a pause (a checkpoint, an evaluation step)"};
inline constexpr Threshold kServingMinGapShare = {
    "serving_min_gap_share", 0.5, "ratio",
    "and waits between them (utilization under 15%) at least this share of the window: a "
    "training loop keeps the GPU busier than it waits"};

// Starved.
inline constexpr Threshold kStarvedMinGapShare = {
    "starved_min_gap_share", 0.10, "ratio",
    "gaps (utilization under 15%) must fill at least this share of the window"};
inline constexpr Threshold kStarvedMaxGapShare = {
    "starved_max_gap_share", 0.90, "ratio",
    "gaps fill at most this share of the window: more is an idle GPU, not a starved one"};
inline constexpr Threshold kStarvedMinBusyShare = {
    "starved_min_busy_share", 0.10, "ratio",
    "busy stretches must fill at least this share of the window"};
inline constexpr Threshold kStarvedMinGaps = {"starved_min_gaps", 3, "count",
                                              "an oscillation needs at least this many idle gaps"};
inline constexpr Threshold kQuietLinkRatio = {
    "quiet_link_ratio", 0.5, "ratio",
    "every link stays below this share of its capacity, else the interconnect, not the input "
    "pipeline, is what the GPU waits for"};

// Memory-bandwidth-bound.
inline constexpr Threshold kDramHigh = {"dram_high", 0.70, "ratio",
                                        "DRAM active at least this (GPM)"};
inline constexpr Threshold kBandwidthSmMax = {
    "bandwidth_sm_max", 0.65, "ratio", "SM active at most this (GPM): the SMs wait for memory"};
inline constexpr Threshold kBandwidthMinUtil = {"bandwidth_min_util", 0.60, "ratio",
                                                "busy at least this share of the time"};
inline constexpr Threshold kMemCopyHigh = {
    "mem_copy_high", 0.70, "ratio",
    "without GPM: memory copy utilization (share of time memory was read or written) at least "
    "this"};

// Compute-bound.
inline constexpr Threshold kComputeUtil = {"compute_util", 0.90, "ratio",
                                           "utilization at least this"};
inline constexpr Threshold kSteadyStddev = {"steady_stddev", 0.10, "points",
                                            "steady: the standard deviation of utilization at most "
                                            "this (also what an activity line calls steady)"};
inline constexpr Threshold kSteadyTrim = {
    "steady_trim", 0.05, "ratio",
    "the spread is taken without this share of the time at either extreme: one stall of up to 15 "
    "s in a 5-minute window is no unsteadiness (the gap share limit still counts it), a load that "
    "keeps moving stays wide"};
inline constexpr Threshold kComputeMaxGapShare = {"compute_max_gap_share", 0.05, "ratio",
                                                  "gaps fill at most this share of the window"};
inline constexpr Threshold kComputeSmActive = {"compute_sm_active", 0.65, "ratio",
                                               "with GPM: SM active at least this"};
inline constexpr Threshold kFallbackClockRatio = {
    "fallback_clock_ratio", 0.90, "ratio",
    "without GPM: the busy SM clock at least this share of its maximum (utilization alone cannot "
    "tell a saturated GPU from one tiny kernel always in flight)"};
inline constexpr Threshold kFallbackPowerRatio = {
    "fallback_power_ratio", 0.50, "ratio",
    "without GPM: the board draws at least this share of its power limit"};

// Memory capacity.
inline constexpr Threshold kMemoryNearFull = {"memory_near_full", 0.90, "ratio",
                                              "at least this share of the framebuffer in use"};
inline constexpr Threshold kOomHorizonSeconds = {
    "oom_horizon", 1800, "s", "or the growth trend reaches a full framebuffer within this"};
inline constexpr Threshold kLeakMinSeconds = {
    "leak_min_seconds", 30, "s",
    "a leak that began inside the window is fitted from its change point once it has run this "
    "long: enough points for a slope, short enough to predict a late leak's OOM within a minute"};
inline constexpr Threshold kLeakMinR2 = {
    "leak_min_fit", 0.9, "ratio",
    "the fit after the change point must explain this much of the variance (a leak is a steady "
    "ramp; one allocation step late in the window is not)"};
inline constexpr Threshold kAllocationStepSeconds = {
    "allocation_step_seconds", 10, "s",
    "a rise of memory used within this long is one allocation (a job loading its model), not "
    "growth"};
inline constexpr Threshold kAllocationStepShare = {
    "allocation_step_share", 0.8, "ratio",
    "when one such rise makes at least this share of the fitted span's rise, the trend is fitted "
    "without it: a step and a flat line never predict an OOM"};

// Thermal and power throttling.
inline constexpr Threshold kThermalMinShare = {
    "thermal_min_share", 0.10, "ratio", "thermal reasons active at least this share of the window"};
inline constexpr Threshold kSwPowerMinShare = {
    "sw_power_min_share", 0.25, "ratio",
    "the software power cap active at least this share of the window (brief caps at full load "
    "are normal on Hopper)"};
inline constexpr Threshold kHwBrakeMinShare = {
    "hw_brake_min_share", 0.05, "ratio",
    "the hardware power brake active at least this share of the window (never normal)"};
inline constexpr Threshold kThrottleMinSeconds = {
    "throttle_min_seconds", 10, "s",
    "thermal or power reasons must hold at least this long in the span judged: one 5 s event (a "
    "load step, a fan spinning up) is a transient, not throttling"};
inline constexpr Threshold kNearSlowdownC = {
    "near_slowdown", 2, "C",
    "without reason bits: the hottest point within this of the slowdown temperature"};
inline constexpr Threshold kNearPowerLimit = {
    "near_power_limit", 0.97, "ratio",
    "without reason bits: power at least this share of the limit"};
inline constexpr Threshold kThrottledClockRatio = {
    "throttled_clock_ratio", 0.90, "ratio",
    "without reason bits: the busy SM clock at most this share of its maximum"};
inline constexpr Threshold kThermalFallbackBusyShare = {
    "thermal_fallback_busy_share", 0.5, "ratio",
    "without reason bits: busy at least this share of the window (an idle clock says nothing)"};
inline constexpr Threshold kClockFall = {
    "clock_fall", 0.03, "ratio",
    "the clock counts as falling when its late busy mean is this share of its maximum below its "
    "early one"};

// Interconnect.
inline constexpr Threshold kLinkSaturatedMean = {"link_saturated_mean", 0.70, "ratio",
                                                 "a link's mean at least this share of capacity"};
inline constexpr Threshold kLinkSaturatedShare = {
    "link_saturated_share", 0.5, "ratio",
    "or a link at >= 80% of its capacity for at least this share of the window"};
inline constexpr Threshold kInterconnectSmMax = {"interconnect_sm_max", 0.60, "ratio",
                                                 "the SMs wait: SM active at most this (GPM)"};
inline constexpr Threshold kInterconnectUtilMax = {"interconnect_util_max", 0.85, "ratio",
                                                   "without GPM: utilization at most this"};
inline constexpr Threshold kInterconnectGapShare = {
    "interconnect_gap_share", 0.10, "ratio",
    "without GPM: or gaps fill at least this share of the window"};
inline constexpr Threshold kPcieGenCheckUtil = {
    "pcie_gen_check_util", 0.2, "ratio",
    "PCIe generation drops at idle for power saving: below this mean utilization a lower "
    "generation is not a fault (a narrower width always is)"};

// Onsets (Finding::since), for every rule.
inline constexpr Threshold kOnsetMinRise = {
    "onset_min_rise", 0.3, "ratio",
    "a change point counts when the share of time the condition holds rises by at least this "
    "from before it to after it; else the condition held throughout the window"};
inline constexpr Threshold kOnsetMinSide = {
    "onset_min_side", 10, "s",
    "each side of a change point spans at least this: a lone sample or a periodic gap is no "
    "onset"};

// vGPU scheduler contention.
inline constexpr Threshold kVgpuWaitHigh = {
    "vgpu_wait_high", 0.25, "ratio",
    "the virtual GPUs in the scheduler's log spend at least this share of the time they have work "
    "preempted: a quarter of their time lost to the others' turns slows every VM visibly"};
inline constexpr Threshold kVgpuMinRunlists = {
    "vgpu_min_runlists", 2, "count",
    "contention needs at least two virtual GPUs running: one alone waits only on its policy's "
    "cap, not on another VM"};
inline constexpr Threshold kVgpuBoardBusy = {
    "vgpu_board_busy", 0.85, "ratio",
    "under equal or fixed share a VM is held to its share even while the board has idle time; "
    "below this utilization of the board its wait is that cap, not the other VMs' turns"};

}  // namespace gpuscope::analysis
