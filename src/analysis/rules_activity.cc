// Rules on how busy the GPU is: idle, idle-held, starved, memory-bandwidth-
// bound and compute-bound.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// A GPU idle for at least this long at the end of the window is described as
// idle, not as a load (DescribeLoad; not a rule's threshold).
constexpr double kRecentIdleSeconds = 10;

bool LinksQuiet(const Signals& s) {
  return (!s.pcie || s.pcie->mean_ratio < kQuietLinkRatio.value) &&
         (!s.nvlink || s.nvlink->mean_ratio < kQuietLinkRatio.value);
}

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

bool Held(const Signals& s) { return s.held_bytes >= kHeldMinBytes.value; }

// Whether the window is idle (mostly, or lately without a break) and whether
// memory is held on it; both idle rules read it, at most one fires. A held
// GPU is never idle: it is idle-held once idle for idle_held_seconds without
// a break, and before that (a pause, or requests between idle gaps) neither.
// A GPU nothing holds has no job to pause: it is idle once its trailing idle
// run reaches kIdleRunSeconds, however busy the window was before.
struct IdleState {
  bool lately = false;  // the trailing idle run reaches idle_held_seconds
  bool held = false;
  bool mostly = false;  // idle for kIdleMinShare of the window
};

std::optional<IdleState> Idleness(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0) return std::nullopt;
  bool mostly = s.idle_share >= kIdleMinShare.value;
  bool lately = s.trailing_idle_seconds >= o.idle_held_seconds;
  if (Held(s)) {
    if (!lately) return std::nullopt;
  } else if (!mostly && !lately && s.trailing_idle_seconds < kIdleRunSeconds.value) {
    return std::nullopt;
  }
  return IdleState{lately, Held(s), mostly};
}

// Who holds the memory, in words.
std::string Holders(const Signals& s) {
  if (s.process_count == 0)
    return fmt::format("{} resident (no process visible)", Bytes(s.held_bytes));
  return fmt::format("{} process(es) hold {}", s.process_count, Bytes(s.held_bytes));
}

// A held GPU answering requests: its work comes in recurring bursts between
// idle gaps that fill most of the window (kServingMinBursts,
// kServingMinGapShare), the last gap shorter than idle_held_seconds.
bool Serving(const Signals& s, const DiagnoseOptions& o) {
  return Held(s) && s.work_runs >= kServingMinBursts.value &&
         s.gap_share >= kServingMinGapShare.value && s.trailing_idle_seconds < o.idle_held_seconds;
}

std::string ServingStory(const Signals& s) {
  std::string out = fmt::format(
      "serving: bursty requests, {} bursts in {} (busy {} of it, utilization {} mean), holding {}",
      s.work_runs, s.span_name, Pct(1 - s.gap_share), Pct(s.util.mean), Bytes(s.held_bytes));
  // The driver's last sampling period may fall between two bursts: said only when it saw work.
  if (s.process_sm && *s.process_sm > 0)
    out += fmt::format("; processes at {} SM lately", Pct(*s.process_sm));
  return out;
}

// The evidence both idle rules record first.
FindingBuilder IdleEvidence(FindingKind kind, const IdleState& idle, const Signals& s,
                            const DiagnoseOptions& o) {
  FindingBuilder b(kind, s, o);
  b.Uses(Metric::kGpuUtil);
  if (idle.lately) {
    b.AtLeast("idle_seconds", s.trailing_idle_seconds, o.idle_held_seconds, o.idle_held_seconds,
              "s");
    b.Note("idle_share", s.idle_share, "ratio");
  } else if (idle.mostly) {
    b.AtLeast("idle_share", s.idle_share, kIdleMinShare.value, 1 - kIdleMinShare.value, "ratio");
  } else {
    b.AtLeast("idle_seconds", s.trailing_idle_seconds, kIdleRunSeconds.value, kIdleRunSeconds.value,
              "s");
    b.Note("idle_share", s.idle_share, "ratio");
  }
  b.Note("util_mean", s.util.mean, "ratio");
  return b;
}

}  // namespace

std::optional<Finding> DetectIdle(const Signals& s, const DiagnoseOptions& o) {
  std::optional<IdleState> idle = Idleness(s, o);
  if (!idle || idle->held) return std::nullopt;
  FindingBuilder b = IdleEvidence(FindingKind::kIdle, *idle, s, o);
  if (s.held_bytes > 0) b.Note("held_bytes", s.held_bytes, "bytes");
  return b.Build(IdleStory(s));
}

std::optional<Finding> DetectIdleHeld(const Signals& s, const DiagnoseOptions& o) {
  std::optional<IdleState> idle = Idleness(s, o);
  if (!idle || !idle->held) return std::nullopt;
  FindingBuilder b = IdleEvidence(FindingKind::kIdleHeld, *idle, s, o);
  b.Uses(Metric::kMemoryUsed);
  b.AtLeast("held_bytes", s.held_bytes, kHeldMinBytes.value, 4 * kHeldMinBytes.value, "bytes");
  b.Note("processes", static_cast<double>(s.process_count), "count");
  return b.Build(fmt::format("{}, while {}", IdleStory(s), Holders(s)));
}

std::string DescribeLoad(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0) return "";
  if (Serving(s, o)) return ServingStory(s);
  if (s.trailing_idle_seconds >= kRecentIdleSeconds) {
    std::string out = IdleStory(s);
    if (Held(s)) {
      out += fmt::format(", {} held (idle-held after {})", Bytes(s.held_bytes),
                         Duration(o.idle_held_seconds));
    }
    return out;
  }
  if (s.util.stddev <= kSteadyStddev.value) {
    return fmt::format("moderate, steady load: utilization {} (sd {})", Pct(s.util.mean),
                       Pct(s.util.stddev));
  }
  return fmt::format("varying load: utilization {} (sd {}), idle {} of the window",
                     Pct(s.util.mean), Pct(s.util.stddev), Pct(s.idle_share));
}

std::optional<Finding> DetectStarved(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0 || !LinksQuiet(s)) return std::nullopt;
  if (s.gap_share < kStarvedMinGapShare.value || s.gap_share > kStarvedMaxGapShare.value)
    return std::nullopt;
  if (s.busy_share < kStarvedMinBusyShare.value || s.gap_runs < kStarvedMinGaps.value)
    return std::nullopt;
  FindingBuilder b(FindingKind::kStarved, s, o);
  b.Uses(Metric::kGpuUtil);
  double gap_mid = (kStarvedMinGapShare.value + kStarvedMaxGapShare.value) / 2;
  // Scored by how far the gap share sits inside its band.
  b.AtLeast(
      "gap_share",
      std::min(s.gap_share, kStarvedMaxGapShare.value + kStarvedMinGapShare.value - s.gap_share),
      kStarvedMinGapShare.value, gap_mid - kStarvedMinGapShare.value, "ratio");
  b.AtLeast("busy_share", s.busy_share, kStarvedMinBusyShare.value, 0.2, "ratio");
  b.AtLeast("gaps", s.gap_runs, kStarvedMinGaps.value, 2 * kStarvedMinGaps.value, "count");
  b.Note("util_stddev", s.util.stddev, "ratio");
  if (s.pcie) {
    b.Uses(Metric::kPcieRxBytesRate);
    b.AtMost("pcie_mean_ratio", s.pcie->mean_ratio, kQuietLinkRatio.value, kQuietLinkRatio.value,
             "ratio");
  } else {
    b.Discount(0.9);  // cannot rule out the interconnect
  }
  if (s.nvlink)
    b.AtMost("nvlink_mean_ratio", s.nvlink->mean_ratio, kQuietLinkRatio.value, 0.3, "ratio");
  return b.Build(
      fmt::format("utilization oscillates (mean {}, sd {}), idle gaps {} of the window in {} "
                  "stretches, interconnect quiet",
                  Pct(s.util.mean), Pct(s.util.stddev), Pct(s.gap_share), s.gap_runs));
}

std::optional<Finding> DetectMemoryBandwidth(const Signals& s, const DiagnoseOptions& o) {
  if (s.util.n == 0 || s.util.mean < kBandwidthMinUtil.value) return std::nullopt;
  FindingBuilder b(FindingKind::kMemoryBandwidth, s, o);
  b.Uses(Metric::kGpuUtil);
  if (s.dram_active && s.sm_active) {
    if (s.dram_active->mean < kDramHigh.value || s.sm_active->mean > kBandwidthSmMax.value) {
      return std::nullopt;
    }
    b.Uses(Metric::kDramActive), b.Uses(Metric::kSmActive);
    b.AtLeast("dram_active_mean", s.dram_active->mean, kDramHigh.value, 0.15, "ratio");
    b.AtMost("sm_active_mean", s.sm_active->mean, kBandwidthSmMax.value, 0.25, "ratio");
  } else if (s.mem_copy) {
    if (s.mem_copy->mean < kMemCopyHigh.value) return std::nullopt;
    b.Fallback();
    b.Uses(Metric::kMemCopyUtil);
    b.AtLeast("mem_copy_util_mean", s.mem_copy->mean, kMemCopyHigh.value, 0.15, "ratio");
  } else {
    return std::nullopt;
  }
  b.AtLeast("util_mean", s.util.mean, kBandwidthMinUtil.value, 0.3, "ratio");
  double dram = s.dram_active ? s.dram_active->mean : s.mem_copy->mean;
  std::string sm = s.sm_active ? fmt::format(" while SM active is {}", Pct(s.sm_active->mean))
                               : std::string(" (memory copy utilization; no GPM)");
  return b.Build(fmt::format("DRAM busy {}{}", Pct(dram), sm));
}

std::optional<Finding> DetectComputeBound(const Signals& s, const DiagnoseOptions& o) {
  // Steadiness on the trimmed spread: one short stall is counted by the gap
  // share, not by a standard deviation it would blow up.
  if (s.util.n == 0 || s.util.mean < kComputeUtil.value || s.util_spread > kSteadyStddev.value ||
      s.gap_share > kComputeMaxGapShare.value) {
    return std::nullopt;
  }
  FindingBuilder b(FindingKind::kComputeBound, s, o);
  b.Uses(Metric::kGpuUtil);
  b.AtLeast("util_mean", s.util.mean, kComputeUtil.value, 0.08, "ratio");
  b.AtMost("util_trimmed_stddev", s.util_spread, kSteadyStddev.value, kSteadyStddev.value, "ratio");
  b.Note("util_stddev", s.util.stddev, "ratio");
  std::string detail;
  if (s.sm_active) {
    if (s.sm_active->mean < kComputeSmActive.value) return std::nullopt;
    b.Uses(Metric::kSmActive);
    b.AtLeast("sm_active_mean", s.sm_active->mean, kComputeSmActive.value, 0.2, "ratio");
    detail = fmt::format("SM active {}", Pct(s.sm_active->mean));
  } else {
    if (!s.clock_mean_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) return std::nullopt;
    double clock = *s.clock_mean_mhz / *s.clock_max_mhz;
    if (clock < kFallbackClockRatio.value) return std::nullopt;
    b.Fallback();
    b.Uses(Metric::kSmClock);
    b.AtLeast("sm_clock_ratio", clock, kFallbackClockRatio.value, 0.08, "ratio");
    detail = fmt::format("SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
    if (s.power_mean_w && s.power_limit_w && *s.power_limit_w > 0) {
      double power = *s.power_mean_w / *s.power_limit_w;
      if (power < kFallbackPowerRatio.value) return std::nullopt;
      b.Uses(Metric::kPowerUsage);
      b.AtLeast("power_ratio", power, kFallbackPowerRatio.value, 0.3, "ratio");
      detail += fmt::format(", power {:.0f} of {:.0f} W", *s.power_mean_w, *s.power_limit_w);
    } else {
      b.Discount(0.9);
    }
  }
  return b.Build(fmt::format("utilization {} steady (sd {} without its extremes), {}",
                             Pct(s.util.mean), Pct(s.util_spread), detail));
}

}  // namespace gpuscope::analysis
