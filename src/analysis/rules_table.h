// The diagnosis rules as data: one row per FindingKind, in enum order, owning
// every fact about its rule: the wire name, the verdict's headline and the
// action, the catalog metrics it may rest on, its thresholds, when it is
// judged (stage, order, recent span, idle GPUs), whether it rules out the
// healthy compute-bound verdict, its docs, and the function that judges it.
// diagnosis.cc evaluates the rows in `order`; KindName and KindFromName read
// the names; docs/diagnosis.md's rule and threshold tables are generated from
// them (RulesDocTable, ThresholdsDocTable) and checked by analysis_tests.
// rules_table.cc proves at compile time that every FindingKind has exactly one
// row, in enum order, with a unique name, and that the stages, orders and flags
// agree.
//
// Adding a finding kind: the enum value, kFindingKindCount and
// kAllFindingKinds (diagnosis.h), its case in rules_table.cc's KindListed,
// its detector (rules_*.cc), its thresholds (rules_thresholds.h) and its row
// here; the build fails until they agree.
//
// Thread safety: immutable, constexpr.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "analysis/diagnosis.h"
#include "analysis/rules_thresholds.h"
#include "analysis/signals.h"
#include "gpuscope/catalog.h"

namespace gpuscope::analysis {

// Judges one rule over the signals: a finding when its conditions hold.
using Detector = std::optional<Finding> (*)(const Signals&, const DiagnoseOptions&);

std::optional<Finding> DetectComputeBound(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectMemoryCapacity(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectMemoryBandwidth(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectThermal(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectPowerCap(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectInterconnect(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectPcieDegraded(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectStarved(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectIdleHeld(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectIdle(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectVgpuContention(const Signals& s, const DiagnoseOptions& o);

// When a rule is judged, in this order.
enum class Stage : uint8_t {
  // First. The first idle rule that fires is the GPU's only finding but for
  // rules marked when_idle: an idle GPU has no bottleneck.
  kIdle,
  // What holds a working GPU back.
  kLimit,
  // Last, and only when no finding of a `limits` rule was made: the healthy
  // saturated state.
  kHealthy,
};

struct Rule {
  FindingKind kind;
  std::string_view name;      // metric label value, JSON, .expect files: never renamed
  std::string_view headline;  // the verdict's first words, before ": "
  Stage stage;
  std::size_t order;  // position in the evaluation; findings of equal confidence keep it
  bool recent;        // judged again over the window's recent part when the window shows nothing
  bool limits;        // its finding rules out the healthy (kHealthy) verdict
  bool when_idle;     // still judged on an idle GPU
  OnsetSignal onset;  // what marks the start of its condition (Finding::since)
  std::span<const Metric> inputs;                // what Finding::signals may name
  std::span<const Threshold* const> thresholds;  // the constants it compares against
  Detector detect;
  std::string_view action;  // Finding::action (a rule may pick a variant of its own)
  std::string_view when;    // docs/diagnosis.md: when it fires, with its thresholds
  std::string_view remedy;  // docs/diagnosis.md: the action in a few words
};

namespace rule_facts {
using enum Metric;
inline constexpr Metric kComputeInputs[] = {kGpuUtil, kSmActive, kSmClock, kPowerUsage};
inline constexpr const Threshold* kComputeThresholds[] = {
    &kComputeUtil,     &kSteadyStddev,       &kSteadyTrim,        &kComputeMaxGapShare,
    &kComputeSmActive, &kFallbackClockRatio, &kFallbackPowerRatio};
inline constexpr Metric kMemoryCapacityInputs[] = {kMemoryUsed, kMemoryFree};
inline constexpr const Threshold* kMemoryCapacityThresholds[] = {
    &kMemoryNearFull, &kOomHorizonSeconds,     &kLeakMinSeconds,
    &kLeakMinR2,      &kAllocationStepSeconds, &kAllocationStepShare};
inline constexpr Metric kBandwidthInputs[] = {kGpuUtil, kDramActive, kSmActive, kMemCopyUtil};
inline constexpr const Threshold* kBandwidthThresholds[] = {&kBandwidthMinUtil, &kDramHigh,
                                                            &kBandwidthSmMax, &kMemCopyHigh};
inline constexpr Metric kThermalInputs[] = {kClockReasons, kGpuTemp, kSmClock};
inline constexpr const Threshold* kThermalThresholds[] = {
    &kThermalMinShare,     &kThrottleMinSeconds,       &kNearSlowdownC,
    &kThrottledClockRatio, &kThermalFallbackBusyShare, &kClockFall};
inline constexpr Metric kPowerInputs[] = {kClockReasons, kPowerUsage, kPowerLimit, kSmClock};
inline constexpr const Threshold* kPowerThresholds[] = {&kSwPowerMinShare, &kHwBrakeMinShare,
                                                        &kThrottleMinSeconds, &kNearPowerLimit,
                                                        &kThrottledClockRatio};
inline constexpr Metric kInterconnectInputs[] = {kPcieRxBytesRate, kNvLinkRxBytesRate, kSmActive,
                                                 kGpuUtil};
inline constexpr const Threshold* kInterconnectThresholds[] = {
    &kLinkSaturatedMean, &kLinkSaturatedShare, &kInterconnectSmMax, &kInterconnectUtilMax,
    &kInterconnectGapShare};
inline constexpr Metric kPcieDegradedInputs[] = {kPcieLinkGen, kPcieLinkWidth};
inline constexpr const Threshold* kPcieDegradedThresholds[] = {&kPcieGenCheckUtil};
inline constexpr Metric kStarvedInputs[] = {kGpuUtil, kPcieRxBytesRate};
inline constexpr const Threshold* kStarvedThresholds[] = {
    &kStarvedMinGapShare, &kStarvedMaxGapShare, &kStarvedMinBusyShare, &kStarvedMinGaps,
    &kQuietLinkRatio};
inline constexpr Metric kIdleHeldInputs[] = {kGpuUtil, kMemoryUsed};
inline constexpr const Threshold* kIdleHeldThresholds[] = {&kHeldMinBytes};
inline constexpr Metric kIdleInputs[] = {kGpuUtil};
inline constexpr const Threshold* kIdleThresholds[] = {
    &kIdleMinShare, &kIdleRunSeconds, &kHeldMinBytes, &kServingMinBursts, &kServingMinGapShare};
inline constexpr Metric kVgpuContentionInputs[] = {kVgpuSchedulerWait, kVgpuSchedulerRunlists,
                                                   kGpuUtil};
inline constexpr const Threshold* kVgpuContentionThresholds[] = {&kVgpuWaitHigh, &kVgpuMinRunlists,
                                                                 &kVgpuBoardBusy};
}  // namespace rule_facts

// clang-format off
inline constexpr std::array<Rule, kFindingKindCount> kRules = {{
  {FindingKind::kComputeBound, "compute_bound", "compute-bound (healthy)",
   Stage::kHealthy, 10, /*recent=*/true, /*limits=*/false, /*when_idle=*/false,
   OnsetSignal::kBusy,
   rule_facts::kComputeInputs, rule_facts::kComputeThresholds, DetectComputeBound,
   "Healthy saturated state: only batch size, kernel choice (tensor cores, mixed precision) or "
   "model changes make it faster.",
   "utilization >= 90% and steady (sd without the 5% extremes <= 10 points, gaps <= 5%); with "
   "GPM SM active >= 65%; "
   "without GPM the busy SM clock >= 90% of max and power >= 50% of the limit. Only when no "
   "thermal, power, interconnect, starved or bandwidth limit was found: the healthy saturated "
   "state",
   "batch size, kernels, model"},
  {FindingKind::kMemoryCapacity, "memory_capacity", "memory capacity",
   Stage::kLimit, 2, /*recent=*/true, /*limits=*/false, /*when_idle=*/false,
   OnsetSignal::kMemory,
   rule_facts::kMemoryCapacityInputs, rule_facts::kMemoryCapacityThresholds, DetectMemoryCapacity,
   "Reduce memory: smaller micro-batch with gradient accumulation, mixed precision, activation "
   "checkpointing; if it keeps growing, look for a leak (tensors kept across steps).",
   "memory used >= 90% of capacity, or the trend (>= 1 MiB/s, r2 >= 0.6) reaches capacity "
   "within 30 minutes; `oom_eta_seconds` = (capacity - fitted now) / slope, 0 when >= 99% full; "
   "a leak that began in the window is fitted from its change point (>= 30 s, r2 >= 0.9); not on "
   "a vGPU host board, whose framebuffer is its VMs' fixed reservations",
   "smaller micro-batch + gradient accumulation, mixed precision, activation checkpointing; a "
   "leak"},
  {FindingKind::kMemoryBandwidth, "memory_bandwidth", "memory-bandwidth-bound",
   Stage::kLimit, 8, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kDram,
   rule_facts::kBandwidthInputs, rule_facts::kBandwidthThresholds, DetectMemoryBandwidth,
   "Raise arithmetic intensity: fuse kernels, use mixed precision (bf16/fp8) to halve bytes "
   "moved, larger batches, FlashAttention-style tiling.",
   "busy >= 60% and DRAM active >= 70% while SM active <= 65% (GPM); without GPM memory copy "
   "utilization >= 70%",
   "fuse kernels, lower precision, larger tiles"},
  {FindingKind::kThermalThrottle, "thermal_throttle", "thermal throttling",
   Stage::kLimit, 3, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kThermal,
   rule_facts::kThermalInputs, rule_facts::kThermalThresholds, DetectThermal,
   "Check airflow and fans (blocked inlet, failed fan, hot aisle), lower the power cap a little "
   "to stay below slowdown, spread load across GPUs.",
   "thermal reasons >= 10% of the span and >= 10 s; evidence: temperature against slowdown - 2 "
   "C, SM clock falling (late vs early busy mean); without reasons: temperature within 2 C of "
   "slowdown and clock <= 90% of max while busy",
   "airflow, fans, power cap, spread load"},
  {FindingKind::kPowerCap, "power_cap", "power capped",
   Stage::kLimit, 4, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kPower,
   rule_facts::kPowerInputs, rule_facts::kPowerThresholds, DetectPowerCap,
   "Check the enforced power limit (nvidia-smi -q -d POWER) against the default; a brake points "
   "at the PSU or rack power budget.",
   "SW power cap >= 25% of the span (brief caps at full load are normal) or HW power brake >= "
   "5%, either >= 10 s; without reasons: power >= 97% of the limit and clock <= 90% of max",
   "enforced vs default limit; PSU, rack budget"},
  {FindingKind::kInterconnect, "interconnect_bound", "interconnect-bound",
   Stage::kLimit, 5, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kLink,
   rule_facts::kInterconnectInputs, rule_facts::kInterconnectThresholds, DetectInterconnect,
   // For PCIe; DetectInterconnect gives NVLink its own (kNvLinkAction).
   "Cut host-device traffic: pinned memory and larger transfers, keep data resident on the GPU, "
   "overlap copies with compute; fix a degraded link (reseat, slot, BIOS).",
   "a link's mean >= 70% of capacity, or >= 80% of capacity for half the window, while SM active "
   "<= 60% (GPM) or utilization <= 85% / gaps >= 10% (no GPM)",
   "pinned memory, resident data, overlap; for NVLink, overlap and layout"},
  {FindingKind::kPcieDegraded, "pcie_degraded", "PCIe link degraded",
   Stage::kLimit, 6, /*recent=*/true, /*limits=*/false, /*when_idle=*/true,
   OnsetSignal::kPcie,
   rule_facts::kPcieDegradedInputs, rule_facts::kPcieDegradedThresholds, DetectPcieDegraded,
   "Reseat the card or riser, check the slot and BIOS PCIe settings; rising replay counts point "
   "at a marginal link. See runbook GpuPcieLinkDegraded.",
   "width below its maximum, or generation below its maximum while utilization >= 20% (the "
   "generation drops at idle to save power)",
   "reseat, slot, BIOS"},
  {FindingKind::kStarved, "starved", "starved",
   Stage::kLimit, 7, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kGaps,
   rule_facts::kStarvedInputs, rule_facts::kStarvedThresholds, DetectStarved,
   "Input-bound: add dataloader workers, use pinned memory and prefetching, move preprocessing "
   "to the GPU or cache decoded data.",
   "gaps (< 15%) fill 10-90% of the span in >= 3 stretches, busy stretches >= 10%, every link "
   "< 50% of capacity",
   "dataloader workers, pinned memory, prefetch"},
  {FindingKind::kIdleHeld, "idle_held", "idle-held",
   Stage::kIdle, 0, /*recent=*/false, /*limits=*/false, /*when_idle=*/false,
   OnsetSignal::kIdleRun,
   rule_facts::kIdleHeldInputs, rule_facts::kIdleHeldThresholds, DetectIdleHeld,
   "Waste: stop the idle notebook or job (or its kernel), or let the scheduler reclaim the GPU; "
   "see runbook GpuIdleHeld.",
   "the trailing idle run (< 5%) reaches 3 minutes (`idle_held_seconds`), however busy the "
   "window was before it, and >= 256 MiB is held (by processes, or resident on the device when "
   "no process is visible); the verdict says what the window shows "
   "(\"idle for the last 3m20s after 1m40s at 98% utilization, while 1 process(es) hold 60.0 "
   "GiB\")",
   "waste: reclaim the GPU"},
  {FindingKind::kIdle, "idle", "idle",
   Stage::kIdle, 1, /*recent=*/false, /*limits=*/false, /*when_idle=*/false,
   OnsetSignal::kIdleRun,
   rule_facts::kIdleInputs, rule_facts::kIdleThresholds, DetectIdle,
   "Nothing to tune; release the GPU to the scheduler if it stays idle.",
   "idle >= 90% of the window, or for the last 30 s without a break (`idle_seconds`), however "
   "busy before; not held (processes, "
   "or the device when no process is visible, hold < 256 MiB): a held GPU is never idle. A held "
   "GPU with >= 3 bursts of work in the window and gaps >= 50% of it is serving (an activity "
   "line, no finding)",
   "none"},
  {FindingKind::kVgpuContention, "vgpu_contention", "vGPU scheduler contention",
   Stage::kLimit, 9, /*recent=*/true, /*limits=*/true, /*when_idle=*/false,
   OnsetSignal::kBusy,
   rule_facts::kVgpuContentionInputs, rule_facts::kVgpuContentionThresholds,
   DetectVgpuContention,
   "The VMs take turns on a time-sliced board: give each a guaranteed share (equal_share or "
   "fixed_share scheduler, with a time slice that suits the workload), move a busy VM to a "
   "less loaded board, or use MIG-backed vGPU profiles so each VM has SMs of its own. See "
   "runbook GpuVgpuSchedulerContention.",
   "on a vGPU host board, >= 2 virtual GPUs ran in the scheduler's log and they spent >= 25% of "
   "their working time preempted, waiting for their turn (nvmlDeviceGetVgpuSchedulerLog: "
   "cumulative preemption time against run time, per software runlist); under equal or fixed "
   "share with the board < 85% busy the wait is the share's cap, and the finding says so; each "
   "instance's own verdict is judged on its share of the time the scheduler let it run",
   "equal or fixed share, move a VM, MIG-backed vGPU"},
}};
// clang-format on

// The row of `kind` (rows are in enum order: rules_table.cc proves it).
constexpr const Rule& RuleFor(FindingKind kind) { return kRules[static_cast<std::size_t>(kind)]; }

// The kinds in evaluation order (by Rule::order).
constexpr std::array<FindingKind, kFindingKindCount> EvaluationOrder() {
  std::array<FindingKind, kFindingKindCount> out{};
  for (const Rule& r : kRules) {
    if (r.order < out.size()) out[r.order] = r.kind;
  }
  return out;
}
inline constexpr std::array<FindingKind, kFindingKindCount> kEvaluationOrder = EvaluationOrder();

// docs/diagnosis.md's findings table ("| kind | when | action |") and its
// thresholds table, one line per row, in table order.
std::string RulesDocTable();
std::string ThresholdsDocTable();

}  // namespace gpuscope::analysis
