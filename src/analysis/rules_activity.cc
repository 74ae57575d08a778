// Rules on how busy the GPU is: idle, idle-held, starved, memory-bandwidth-
// bound and compute-bound.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// Idle: utilization under kIdleUtil for at least this share of the window, or
// without a break for the last idle_held_seconds (DiagnoseOptions).
constexpr double kIdleMinShare = 0.9;
// A GPU idle for at least this long at the end of the window is described as
// idle, not as a load.
constexpr double kRecentIdleSeconds = 10;
// Memory processes must hold before an idle GPU counts as held (256 MiB: more
// than a bare CUDA context on every current board).
constexpr double kHeldMinBytes = 256.0 * 1024 * 1024;

// Starved: gaps (util < kGapUtil) fill between 10% and 90% of the window,
// there are at least 3 of them, and busy stretches fill at least 10%.
constexpr double kStarvedMinGapShare = 0.10;
constexpr double kStarvedMaxGapShare = 0.90;
constexpr double kStarvedMinBusyShare = 0.10;
constexpr int kStarvedMinGaps = 3;
// ...while every link stays below this share of its capacity (else the
// interconnect, not the input pipeline, is what the GPU waits for).
constexpr double kQuietLinkRatio = 0.5;

// Memory-bandwidth-bound: DRAM active at least 70% (GPM) while SM activity is
// at most 65% and the GPU is busy at least 60% of the time.
constexpr double kDramHigh = 0.70;
constexpr double kBandwidthSmMax = 0.65;
constexpr double kBandwidthMinUtil = 0.60;
// Without GPM: memory copy utilization (share of time memory was read or
// written) at least 70%.
constexpr double kMemCopyHigh = 0.70;

// Compute-bound: utilization at least 90% and steady (stddev at most 10
// points, gaps at most 5% of the window); with GPM, SM active at least 65%.
constexpr double kComputeUtil = 0.90;
constexpr double kSteadyStddev = 0.10;
constexpr double kComputeMaxGapShare = 0.05;
constexpr double kComputeSmActive = 0.65;
// Without GPM, utilization alone cannot tell a saturated GPU from one tiny
// kernel always in flight: the clock must run near its maximum (at least 90%)
// and the board draw at least half its power limit.
constexpr double kFallbackClockRatio = 0.90;
constexpr double kFallbackPowerRatio = 0.50;

bool LinksQuiet(const Signals& s) {
  return (!s.pcie || s.pcie->mean_ratio < kQuietLinkRatio) &&
         (!s.nvlink || s.nvlink->mean_ratio < kQuietLinkRatio);
}

}  // namespace

namespace {

// What the idle part of the window looks like, in words.
std::string IdleStory(const Signals& s) {
  if (s.trailing_idle_seconds >= s.span_seconds) {
    return fmt::format("idle for the whole {} window", Duration(s.span_seconds));
  }
  if (s.trailing_idle_seconds > 0 && s.util_before_idle.n > 0) {
    return fmt::format("idle for the last {} after {} at {} utilization",
                       Duration(s.trailing_idle_seconds), Duration(s.load_before_idle_seconds),
                       Pct(s.util_before_idle.mean));
  }
  return fmt::format("idle {} of the window, utilization {}", Pct(s.idle_share), Pct(s.util.mean));
}

}  // namespace

std::optional<Finding> DetectIdle(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0) return std::nullopt;
  bool mostly = s.idle_share >= kIdleMinShare;
  bool lately = s.trailing_idle_seconds >= o.idle_held_seconds;
  if (!mostly && !lately) return std::nullopt;
  bool held = s.held_bytes >= kHeldMinBytes && lately;
  FindingBuilder b(held ? FindingKind::kIdleHeld : FindingKind::kIdle, s, o);
  b.Uses("gpu_util");
  if (lately) {
    b.AtLeast("idle_seconds", s.trailing_idle_seconds, o.idle_held_seconds, o.idle_held_seconds,
              "s");
    b.Note("idle_share", s.idle_share, "ratio");
  } else {
    b.AtLeast("idle_share", s.idle_share, kIdleMinShare, 1 - kIdleMinShare, "ratio");
  }
  b.Note("util_mean", s.util.mean, "ratio");
  if (!held) {
    if (s.held_bytes > 0) b.Note("held_bytes", s.held_bytes, "bytes");
    return b.Build("idle: " + IdleStory(s),
                   "Nothing to tune; release the GPU to the scheduler if it stays idle.");
  }
  b.Uses("memory_used");
  b.AtLeast("held_bytes", s.held_bytes, kHeldMinBytes, 4 * kHeldMinBytes, "bytes");
  b.Note("processes", static_cast<double>(s.process_count), "count");
  return b.Build(
      fmt::format("idle-held: {}, while {} process(es) hold {}", IdleStory(s), s.process_count,
                  Bytes(s.held_bytes)),
      "Waste: stop the idle notebook or job (or its kernel), or let the scheduler reclaim "
      "the GPU; see runbook GpuIdleHeld.");
}

std::string DescribeLoad(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0) return "";
  if (s.trailing_idle_seconds >= kRecentIdleSeconds) {
    std::string out = IdleStory(s);
    if (s.held_bytes >= kHeldMinBytes) {
      out += fmt::format(", {} held (idle-held after {})", Bytes(s.held_bytes),
                         Duration(o.idle_held_seconds));
    }
    return out;
  }
  if (s.util.stddev <= kSteadyStddev) {
    return fmt::format("moderate, steady load: utilization {} (sd {})", Pct(s.util.mean),
                       Pct(s.util.stddev));
  }
  return fmt::format("varying load: utilization {} (sd {}), idle {} of the window",
                     Pct(s.util.mean), Pct(s.util.stddev), Pct(s.idle_share));
}

std::optional<Finding> DetectStarved(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0 || !LinksQuiet(s)) return std::nullopt;
  if (s.gap_share < kStarvedMinGapShare || s.gap_share > kStarvedMaxGapShare) return std::nullopt;
  if (s.busy_share < kStarvedMinBusyShare || s.gap_runs < kStarvedMinGaps) return std::nullopt;
  FindingBuilder b(FindingKind::kStarved, s, o);
  b.Uses("gpu_util");
  double gap_mid = (kStarvedMinGapShare + kStarvedMaxGapShare) / 2;
  // Scored by how far the gap share sits inside its band.
  b.AtLeast("gap_share",
            std::min(s.gap_share, kStarvedMaxGapShare + kStarvedMinGapShare - s.gap_share),
            kStarvedMinGapShare, gap_mid - kStarvedMinGapShare, "ratio");
  b.AtLeast("busy_share", s.busy_share, kStarvedMinBusyShare, 0.2, "ratio");
  b.AtLeast("gaps", s.gap_runs, kStarvedMinGaps, 2 * kStarvedMinGaps, "count");
  b.Note("util_stddev", s.util.stddev, "ratio");
  if (s.pcie) {
    b.Uses("pcie_rx_rate");
    b.AtMost("pcie_mean_ratio", s.pcie->mean_ratio, kQuietLinkRatio, kQuietLinkRatio, "ratio");
  } else {
    b.Discount(0.9);  // cannot rule out the interconnect
  }
  if (s.nvlink) b.AtMost("nvlink_mean_ratio", s.nvlink->mean_ratio, kQuietLinkRatio, 0.3, "ratio");
  return b.Build(
      fmt::format("starved: utilization oscillates (mean {}, sd {}), idle gaps {} of the window "
                  "in {} stretches, interconnect quiet",
                  Pct(s.util.mean), Pct(s.util.stddev), Pct(s.gap_share), s.gap_runs),
      "Input-bound: add dataloader workers, use pinned memory and prefetching, move "
      "preprocessing to the GPU or cache decoded data.");
}

std::optional<Finding> DetectMemoryBandwidth(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0 || s.util.mean < kBandwidthMinUtil) return std::nullopt;
  FindingBuilder b(FindingKind::kMemoryBandwidth, s, o);
  b.Uses("gpu_util");
  if (s.dram_active && s.sm_active) {
    if (s.dram_active->mean < kDramHigh || s.sm_active->mean > kBandwidthSmMax) {
      return std::nullopt;
    }
    b.Uses("dram_active"), b.Uses("sm_active");
    b.AtLeast("dram_active_mean", s.dram_active->mean, kDramHigh, 0.15, "ratio");
    b.AtMost("sm_active_mean", s.sm_active->mean, kBandwidthSmMax, 0.25, "ratio");
  } else if (s.mem_copy) {
    if (s.mem_copy->mean < kMemCopyHigh) return std::nullopt;
    b.Fallback();
    b.Uses("mem_copy_util");
    b.AtLeast("mem_copy_util_mean", s.mem_copy->mean, kMemCopyHigh, 0.15, "ratio");
  } else {
    return std::nullopt;
  }
  b.AtLeast("util_mean", s.util.mean, kBandwidthMinUtil, 0.3, "ratio");
  double dram = s.dram_active ? s.dram_active->mean : s.mem_copy->mean;
  std::string sm = s.sm_active ? fmt::format(" while SM active is {}", Pct(s.sm_active->mean))
                               : std::string(" (memory copy utilization; no GPM)");
  return b.Build(
      fmt::format("memory-bandwidth-bound: DRAM busy {}{}", Pct(dram), sm),
      "Raise arithmetic intensity: fuse kernels, use mixed precision (bf16/fp8) to halve "
      "bytes moved, larger batches, FlashAttention-style tiling.");
}

std::optional<Finding> DetectComputeBound(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0 || s.util.mean < kComputeUtil || s.util.stddev > kSteadyStddev ||
      s.gap_share > kComputeMaxGapShare) {
    return std::nullopt;
  }
  FindingBuilder b(FindingKind::kComputeBound, s, o);
  b.Uses("gpu_util");
  b.AtLeast("util_mean", s.util.mean, kComputeUtil, 0.08, "ratio");
  b.AtMost("util_stddev", s.util.stddev, kSteadyStddev, kSteadyStddev, "ratio");
  std::string detail;
  if (s.sm_active) {
    if (s.sm_active->mean < kComputeSmActive) return std::nullopt;
    b.Uses("sm_active");
    b.AtLeast("sm_active_mean", s.sm_active->mean, kComputeSmActive, 0.2, "ratio");
    detail = fmt::format("SM active {}", Pct(s.sm_active->mean));
  } else {
    if (!s.clock_mean_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) return std::nullopt;
    double clock = *s.clock_mean_mhz / *s.clock_max_mhz;
    if (clock < kFallbackClockRatio) return std::nullopt;
    b.Fallback();
    b.Uses("sm_clock");
    b.AtLeast("sm_clock_ratio", clock, kFallbackClockRatio, 0.08, "ratio");
    detail = fmt::format("SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
    if (s.power_mean_w && s.power_limit_w && *s.power_limit_w > 0) {
      double power = *s.power_mean_w / *s.power_limit_w;
      if (power < kFallbackPowerRatio) return std::nullopt;
      b.Uses("power_usage");
      b.AtLeast("power_ratio", power, kFallbackPowerRatio, 0.3, "ratio");
      detail += fmt::format(", power {:.0f} of {:.0f} W", *s.power_mean_w, *s.power_limit_w);
    } else {
      b.Discount(0.9);
    }
  }
  return b.Build(fmt::format("compute-bound (healthy): utilization {} steady (sd {}), {}",
                             Pct(s.util.mean), Pct(s.util.stddev), detail),
                 "Healthy saturated state: only batch size, kernel choice (tensor cores, mixed "
                 "precision) or model changes make it faster.");
}

}  // namespace gpuscope::analysis
