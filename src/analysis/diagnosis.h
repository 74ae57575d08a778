// Bottleneck diagnosis: what limits one GPU (or MIG instance) over a trailing
// window of samples. Diagnose() is a pure function of the GPU's identity, its
// window points and its latest sample; it returns zero or more findings
// (compute-bound, memory capacity or bandwidth, thermal or power throttling,
// interconnect-bound, PCIe link degraded, starved, idle-held, idle). Each
// finding carries a confidence in [0, 1], the signals it rested on, the
// measured values with the thresholds they were held against, a one-line
// verdict and the recommended action. Each kind is one row of the rule table
// (rules_table.h: name, inputs, thresholds, texts, evaluation order), which
// is checked against this enum at compile time. docs/diagnosis.md explains
// the rules.
//
// Where GPM (profiling) metrics are missing (Ampere, Ada), findings rest on
// fallbacks (utilization, SM clock against max, power against limit, memory
// copy utilization, PCIe throughput), say so (`fallback`) and carry a lower
// confidence.
//
// Thread safety: pure functions over caller-owned values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis {

enum class FindingKind : uint8_t {
  kComputeBound,     // healthy saturated state: SMs busy and steady, nothing else limits
  kMemoryCapacity,   // framebuffer near full or growing towards it
  kMemoryBandwidth,  // DRAM busy while the SMs are only moderately active
  kThermalThrottle,  // thermal clock event reasons, falling clock near the slowdown point
  kPowerCap,         // software power cap or hardware power brake holds the clocks down
  kInterconnect,     // PCIe or NVLink near capacity while the SMs wait
  kPcieDegraded,     // PCIe link below its maximum generation or width
  kStarved,          // utilization oscillates with idle gaps, interconnect quiet
  kIdleHeld,         // processes hold memory but the GPU does nothing: waste
  kIdle,             // nothing runs
  kVgpuContention,   // time-sliced virtual GPUs of a vGPU host wait for each other
};
// Adding a kind: rules_table.h says what else it needs (a compile-time check
// in rules_table.cc fails until the count, this list and the table agree).
inline constexpr std::size_t kFindingKindCount = 11;
inline constexpr std::array<FindingKind, kFindingKindCount> kAllFindingKinds = {
    FindingKind::kComputeBound,    FindingKind::kMemoryCapacity,
    FindingKind::kMemoryBandwidth, FindingKind::kThermalThrottle,
    FindingKind::kPowerCap,        FindingKind::kInterconnect,
    FindingKind::kPcieDegraded,    FindingKind::kStarved,
    FindingKind::kIdleHeld,        FindingKind::kIdle,
    FindingKind::kVgpuContention};

// "compute_bound", "memory_capacity", ... (metric label values, JSON, labels
// of the ground-truth scenarios).
std::string_view KindName(FindingKind kind);
std::optional<FindingKind> KindFromName(std::string_view name);

// One measured value held against its threshold.
struct Evidence {
  std::string signal;      // "sm_active_mean", "thermal_reason_share", ...
  double value = 0;        // measured, in `unit`
  std::string comparison;  // ">=", "<=", "<", ">"
  double threshold = 0;    // in `unit`
  std::string unit;        // "ratio", "percent", "bytes", "bytes/s", "s", "W", "MHz", "C"
  bool met = false;        // whether value satisfied the comparison
};

struct Finding {
  FindingKind kind = FindingKind::kIdle;
  double confidence = 0;             // [0, 1]: margins x signal quality x coverage
  bool fallback = false;             // rested on non-GPM proxies
  std::vector<std::string> signals;  // catalog keys it rested on ("sm_active", "gpu_util")
  std::vector<Evidence> evidence;
  std::string verdict;                    // one line with the key numbers
  std::string action;                     // what to do about it
  std::optional<double> oom_eta_seconds;  // memory capacity: predicted seconds to full
  // Since when the finding holds (unix seconds): the change point of its
  // condition in the window (Rule::onset), else the window's start (it held
  // throughout, or began before). since_seconds: how long before the
  // window's last point that was.
  double since = 0;
  double since_seconds = 0;
};

struct DiagnoseOptions {
  double window_seconds = 300;  // trailing span analysed (--window, default 5m)
  // Idle this long without a break is idle (with memory held: idle-held,
  // waste), however busy the window was before.
  double idle_held_seconds = 180;
  // The limit rules (Rule::recent) are also judged over this trailing span
  // and over its last half, so a limit that began less than a window ago is
  // found within a minute of its onset, whatever the window, rather than
  // once it fills enough of the window; 0: off.
  double recent_seconds = 60;
  double min_span_seconds = 30;  // shorter windows give no findings
  double nvlink_link_gbps = 0;   // GB/s per link per direction; 0: by architecture
};

// The findings for one GPU, strongest first. `points` oldest first (as
// Window::Points returns them); only those within window_seconds of the last
// are used. Fewer than min_span_seconds of data: no findings.
std::vector<Finding> Diagnose(const GpuInfo& info, std::span<const WindowPoint> points,
                              const GpuSample& latest, const DiagnoseOptions& options);

// The findings and, for a GPU without any, what the window shows in one line
// ("idle for the last 1m10s after 3m50s at 97% utilization, holding 60.0 GiB",
// "moderate, steady load: utilization 45% (sd 3%)", "varying load: ..."), from
// one computation of the window's signals, for points already cut to the window
// (TrailingPoints): what `gpuscope serve` runs for every GPU every diagnose
// interval. Both empty with fewer than min_span_seconds of data.
struct Judgement {
  std::vector<Finding> findings;
  std::string activity;
};
Judgement JudgeTrailing(const GpuInfo& info, std::span<const WindowPoint> used,
                        const GpuSample& latest, const DiagnoseOptions& options);

// The finding of `kind` in `findings`, or nullptr.
const Finding* FindKind(const std::vector<Finding>& findings, FindingKind kind);

}  // namespace gpuscope::analysis
