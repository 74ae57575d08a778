// Export profiles: how much detail `gpuscope serve` puts on the wire.
//
// `lean` (the default) keeps what the shipped dashboards, alert and recording
// rules, and the dcgm-exporter families need, at most 60 series per H100
// (docs/scaling.md says why each choice):
//   - catalog rows: their LeanPolicy column (below). kAlways rows as in `full`; kSparse rows
//     (error counters, throttle reasons, pending/failure flags) only once their
//     value has been non-zero, counters once they have grown since the agent
//     started (NVML's run since the driver loaded); kFullOnly rows not at all;
//   - extra families by their Family::detail: sparse ones (health verdicts,
//     collector staleness, bottleneck confidence, the idle-held and waste
//     counters) a series only once its value has been non-zero; full-only ones
//     (the 0/1 gpuscope_bottleneck: confidence > 0 says the same) not at all;
//   - per-link NVLink series only for links whose error counters have grown
//     since the agent started, or that are down (or all, with --nvlink-per-link); the per-GPU
//     totals (gpuscope_nvlink_errors_total) always;
//   - gpuscope_gpu_last_sample_timestamp_seconds only in `full`.
// A sparse series, once shown, stays until the agent restarts, so each is
// created at most once and never flaps. `full` exports everything, as before.
//
// Thread safety: constexpr data and pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "gpuscope/catalog.h"

namespace gpuscope::prom {

enum class Profile : uint8_t { kLean, kFull };

// "lean" or "full".
std::optional<Profile> ParseProfile(std::string_view text);
std::string_view ProfileName(Profile profile);

// What the lean profile does with a catalog row's native series is the row's
// own required column (MetricDef::lean, gpuscope::LeanPolicy). kAlways: read
// by a shipped panel or rule, or the base of one (limits, link capabilities).
// kSparse: zero on a healthy GPU, and only its first non-zero value matters to
// the rules (they test `> 0` or rates of later increments). kFullOnly: e.g.
// utilization (DCGM_FI_DEV_GPU_UTIL has it, and the rules read
// rate(gpuscope_gpu_busy_seconds_total), exact at any scrape interval), the
// gpu_idle throttle reason (no panel or rule reads it).
using gpuscope::LeanPolicy;

std::string_view LeanPolicyName(LeanPolicy policy);  // "always", "when non-zero", "full only"

}  // namespace gpuscope::prom
