// Rules on what holds the GPU back: memory capacity, thermal and power
// throttling.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// Reason shares inferred from bits sampled once per cycle are a little less
// exact than the sampler's integrals.
constexpr double kBitsQuality = 0.95;

std::optional<double> ClockRatio(const Signals& s) {
  if (!s.clock_mean_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) return std::nullopt;
  return *s.clock_mean_mhz / *s.clock_max_mhz;
}

void ClockEvidence(const Signals& s, FindingBuilder& b) {
  if (auto ratio = ClockRatio(s)) {
    b.Uses(Metric::kSmClock);
    b.Note("sm_clock_ratio", *ratio, "ratio");
    b.Note("sm_clock_mean", *s.clock_mean_mhz, "MHz");
    b.Note("sm_clock_max", *s.clock_max_mhz, "MHz");
  }
}

// Records the clock evidence and says how the busy clock moved: falling
// (late mean kClockFall.value below the early one) or where it sat.
std::string ClockFallText(const Signals& s, FindingBuilder& b) {
  ClockEvidence(s, b);
  if (!s.clock_early_mhz || !s.clock_late_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) {
    return "";
  }
  double fall = (*s.clock_early_mhz - *s.clock_late_mhz) / *s.clock_max_mhz;
  b.Note("sm_clock_fall", fall, "ratio");
  if (fall >= kClockFall.value) {
    return fmt::format(", SM clock falling {:.0f} -> {:.0f} MHz", *s.clock_early_mhz,
                       *s.clock_late_mhz);
  }
  return fmt::format(", SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
}

// Seconds reasons active `share` of the span held: one short event is a
// transient, not throttling (kThrottleMinSeconds).
double ReasonSeconds(const Signals& s, double share) {
  // The span a share is of: the points' span plus the last point's time.
  return share * (s.span_seconds + 1);
}

void RecordReasonSeconds(const Signals& s, double share, FindingBuilder& b) {
  b.AtLeast("reason_seconds", ReasonSeconds(s, share), kThrottleMinSeconds.value,
            kThrottleMinSeconds.value, "s");
}

// Records the reason shares of a power cap or brake; false when neither
// reaches its threshold. `why` gets the words.
bool PowerReasons(const Signals& s, FindingBuilder& b, std::string& why) {
  double sw = s.sw_power_share.value_or(0), brake = s.hw_brake_share.value_or(0);
  if (sw < kSwPowerMinShare.value && brake < kHwBrakeMinShare.value) return false;
  if (ReasonSeconds(s, std::max(sw, brake)) < kThrottleMinSeconds.value) return false;
  b.Uses(Metric::kClockReasons);
  if (!s.reasons_from_counters) b.Discount(kBitsQuality);
  if (brake >= kHwBrakeMinShare.value) {
    b.AtLeast("hw_power_brake_share", brake, kHwBrakeMinShare.value, 0.3, "ratio");
    why = fmt::format("hardware power brake active {} of {}", Pct(brake), s.span_name);
  }
  if (sw >= kSwPowerMinShare.value) {
    b.AtLeast("sw_power_cap_share", sw, kSwPowerMinShare.value, 0.5, "ratio");
    if (!why.empty()) why += "; ";
    why += fmt::format("software power cap active {} of {}", Pct(sw), s.span_name);
  }
  RecordReasonSeconds(s, std::max(sw, brake), b);
  return true;
}

}  // namespace

std::optional<Finding> DetectMemoryCapacity(const Signals& s, const DiagnoseOptions& o) {
  if (!s.mem_capacity || !s.mem_used_last || *s.mem_capacity <= 0) return std::nullopt;
  // A vGPU host board's framebuffer is its VMs' fixed reservations: a fully
  // carved board reads full and never grows, and a VM runs out in its own.
  if (s.vgpu_host) return std::nullopt;
  double fill = *s.mem_used_last / *s.mem_capacity;
  bool full = fill >= kMemoryNearFull.value;
  bool trend = s.oom_eta_seconds && *s.oom_eta_seconds <= kOomHorizonSeconds.value;
  if (!full && !trend) return std::nullopt;
  FindingBuilder b(FindingKind::kMemoryCapacity, s, o);
  b.Uses(Metric::kMemoryUsed), b.Uses(Metric::kMemoryFree);
  std::string verdict =
      fmt::format("{} of {} used ({})", Bytes(*s.mem_used_last), Bytes(*s.mem_capacity), Pct(fill));
  if (full) b.AtLeast("memory_used_ratio", fill, kMemoryNearFull.value, 0.08, "ratio");
  if (trend) {
    b.AtMost("oom_eta", *s.oom_eta_seconds, kOomHorizonSeconds.value, kOomHorizonSeconds.value,
             "s");
    b.Note("memory_growth", s.mem_trend->slope, "bytes/s");
    b.Note("trend_r2", s.mem_trend->r2, "ratio");
    verdict +=
        fmt::format(", growing {}/s (r2 {:.2f}): out of memory in ~{}", Bytes(s.mem_trend->slope),
                    s.mem_trend->r2, Duration(*s.oom_eta_seconds));
    if (s.mem_trend_since) {
      // The slope is the leak's own, fitted after the point it began.
      b.Note("leak_seconds", s.end - *s.mem_trend_since, "s");
      verdict += fmt::format(" (a leak for the last {})", Duration(s.end - *s.mem_trend_since));
    }
  }
  Finding f = b.Build(verdict);
  f.oom_eta_seconds = s.oom_eta_seconds;
  return f;
}

std::optional<Finding> DetectThermal(const Signals& s, const DiagnoseOptions& o) {
  FindingBuilder b(FindingKind::kThermalThrottle, s, o);
  bool near =
      s.temp_max && s.slowdown_temp && *s.temp_max >= *s.slowdown_temp - kNearSlowdownC.value;
  std::optional<double> ratio = ClockRatio(s);
  if (s.thermal_share) {
    if (*s.thermal_share < kThermalMinShare.value) return std::nullopt;
    if (ReasonSeconds(s, *s.thermal_share) < kThrottleMinSeconds.value) return std::nullopt;
    b.Uses(Metric::kClockReasons);
    b.AtLeast("thermal_reason_share", *s.thermal_share, kThermalMinShare.value, 0.3, "ratio");
    RecordReasonSeconds(s, *s.thermal_share, b);
    if (!s.reasons_from_counters) b.Discount(kBitsQuality);
  } else {
    // Fallback: no reasons at all; temperature and clock must both say so.
    if (!near || !ratio || *ratio > kThrottledClockRatio.value ||
        s.busy_share < kThermalFallbackBusyShare.value) {
      return std::nullopt;
    }
    b.Fallback();
    b.AtMost("sm_clock_ratio", *ratio, kThrottledClockRatio.value, 0.2, "ratio");
  }
  if (s.temp_max && s.slowdown_temp) {
    b.Uses(Metric::kGpuTemp);
    b.AtLeast("temperature_max", *s.temp_max, *s.slowdown_temp - kNearSlowdownC.value,
              kNearSlowdownC.value, "C");
  }
  std::string clock = ClockFallText(s, b);
  std::string temp =
      s.temp_max && s.slowdown_temp
          ? fmt::format(", {:.0f} C against slowdown at {:.0f} C", *s.temp_max, *s.slowdown_temp)
          : std::string();
  std::string share =
      s.thermal_share
          ? fmt::format("thermal slowdown active {} of {}", Pct(*s.thermal_share), s.span_name)
          : std::string("near the slowdown temperature with a low clock");
  return b.Build(share + temp + clock);
}

std::optional<Finding> DetectPowerCap(const Signals& s, const DiagnoseOptions& o) {
  FindingBuilder b(FindingKind::kPowerCap, s, o);
  std::optional<double> ratio = ClockRatio(s);
  std::optional<double> power;
  if (s.power_mean_w && s.power_limit_w && *s.power_limit_w > 0) {
    power = *s.power_mean_w / *s.power_limit_w;
  }
  std::string why;
  if (s.sw_power_share || s.hw_brake_share) {
    if (!PowerReasons(s, b, why)) return std::nullopt;
  } else {
    if (!power || !ratio || *power < kNearPowerLimit.value || *ratio > kThrottledClockRatio.value) {
      return std::nullopt;
    }
    b.Fallback();
    b.AtLeast("power_ratio", *power, kNearPowerLimit.value, 0.03, "ratio");
    b.AtMost("sm_clock_ratio", *ratio, kThrottledClockRatio.value, 0.2, "ratio");
    why = "drawing at its power limit with a low clock";
  }
  if (power) {
    b.Uses(Metric::kPowerUsage), b.Uses(Metric::kPowerLimit);
    b.Note("power_mean", *s.power_mean_w, "W");
    b.Note("power_limit", *s.power_limit_w, "W");
    why += fmt::format(", {:.0f} W against a {:.0f} W limit", *s.power_mean_w, *s.power_limit_w);
  }
  ClockEvidence(s, b);
  if (ratio)
    why += fmt::format(", SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
  return b.Build(why);
}

}  // namespace gpuscope::analysis
