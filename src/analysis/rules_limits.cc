// Rules on what holds the GPU back: memory capacity, thermal and power
// throttling.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// Memory capacity: at least 90% of the framebuffer in use, or a growth trend
// that reaches it within 30 minutes.
constexpr double kMemoryNearFull = 0.90;
constexpr double kOomHorizonSeconds = 1800;

// Throttling: thermal reasons active at least 10% of the window; the
// software power cap at least 25% (brief caps at full load are normal on
// Hopper); the hardware power brake at least 5% (never normal).
constexpr double kThermalMinShare = 0.10;
constexpr double kSwPowerMinShare = 0.25;
constexpr double kHwBrakeMinShare = 0.05;
// Without reason bits: temperature within 2 C of slowdown, or power within 3%
// of the limit, with the busy clock at most 90% of its maximum.
constexpr double kNearSlowdownC = 2;
constexpr double kNearPowerLimit = 0.97;
constexpr double kThrottledClockRatio = 0.90;
// The clock counts as falling when its late busy mean is 3% (of max) below its
// early one.
constexpr double kClockFall = 0.03;
// Reason shares inferred from bits sampled once per cycle are a little less
// exact than the sampler's integrals.
constexpr double kBitsQuality = 0.95;

std::optional<double> ClockRatio(const Signals& s) {
  if (!s.clock_mean_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) return std::nullopt;
  return *s.clock_mean_mhz / *s.clock_max_mhz;
}

void ClockEvidence(const Signals& s, FindingBuilder& b) {
  if (auto ratio = ClockRatio(s)) {
    b.Uses("sm_clock");
    b.Note("sm_clock_ratio", *ratio, "ratio");
    b.Note("sm_clock_mean", *s.clock_mean_mhz, "MHz");
    b.Note("sm_clock_max", *s.clock_max_mhz, "MHz");
  }
}

// Records the clock evidence and says how the busy clock moved: falling
// (late mean kClockFall below the early one) or where it sat.
std::string ClockFallText(const Signals& s, FindingBuilder& b) {
  ClockEvidence(s, b);
  if (!s.clock_early_mhz || !s.clock_late_mhz || !s.clock_max_mhz || *s.clock_max_mhz <= 0) {
    return "";
  }
  double fall = (*s.clock_early_mhz - *s.clock_late_mhz) / *s.clock_max_mhz;
  b.Note("sm_clock_fall", fall, "ratio");
  if (fall >= kClockFall) {
    return fmt::format(", SM clock falling {:.0f} -> {:.0f} MHz", *s.clock_early_mhz,
                       *s.clock_late_mhz);
  }
  return fmt::format(", SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
}

// Records the reason shares of a power cap or brake; false when neither
// reaches its threshold. `why` gets the words.
bool PowerReasons(const Signals& s, FindingBuilder& b, std::string& why) {
  double sw = s.sw_power_share.value_or(0), brake = s.hw_brake_share.value_or(0);
  if (sw < kSwPowerMinShare && brake < kHwBrakeMinShare) return false;
  b.Uses("clock_reasons");
  if (!s.reasons_from_counters) b.Discount(kBitsQuality);
  if (brake >= kHwBrakeMinShare) {
    b.AtLeast("hw_power_brake_share", brake, kHwBrakeMinShare, 0.3, "ratio");
    why = fmt::format("hardware power brake active {} of {}", Pct(brake), s.span_name);
  }
  if (sw >= kSwPowerMinShare) {
    b.AtLeast("sw_power_cap_share", sw, kSwPowerMinShare, 0.5, "ratio");
    if (!why.empty()) why += "; ";
    why += fmt::format("software power cap active {} of {}", Pct(sw), s.span_name);
  }
  return true;
}

}  // namespace

std::optional<Finding> DetectMemoryCapacity(const Signals& s, const DiagnoseOptions& o) {
  if (!s.mem_capacity || !s.mem_used_last || *s.mem_capacity <= 0) return std::nullopt;
  double fill = *s.mem_used_last / *s.mem_capacity;
  bool full = fill >= kMemoryNearFull;
  bool trend = s.oom_eta_seconds && *s.oom_eta_seconds <= kOomHorizonSeconds;
  if (!full && !trend) return std::nullopt;
  FindingBuilder b(FindingKind::kMemoryCapacity, s, o);
  b.Uses("memory_used"), b.Uses("memory_free");
  std::string verdict = fmt::format("memory capacity: {} of {} used ({})", Bytes(*s.mem_used_last),
                                    Bytes(*s.mem_capacity), Pct(fill));
  if (full) b.AtLeast("memory_used_ratio", fill, kMemoryNearFull, 0.08, "ratio");
  if (trend) {
    b.AtMost("oom_eta", *s.oom_eta_seconds, kOomHorizonSeconds, kOomHorizonSeconds, "s");
    b.Note("memory_growth", s.mem_trend->slope, "bytes/s");
    b.Note("trend_r2", s.mem_trend->r2, "ratio");
    verdict +=
        fmt::format(", growing {}/s (r2 {:.2f}): out of memory in ~{}", Bytes(s.mem_trend->slope),
                    s.mem_trend->r2, Duration(*s.oom_eta_seconds));
  }
  Finding f = b.Build(verdict,
                      "Reduce memory: smaller micro-batch with gradient accumulation, mixed "
                      "precision, activation checkpointing; if it keeps growing, look for a "
                      "leak (tensors kept across steps).");
  f.oom_eta_seconds = s.oom_eta_seconds;
  return f;
}

std::optional<Finding> DetectThermal(const Signals& s, const DiagnoseOptions& o) {
  FindingBuilder b(FindingKind::kThermalThrottle, s, o);
  bool near = s.temp_max && s.slowdown_temp && *s.temp_max >= *s.slowdown_temp - kNearSlowdownC;
  std::optional<double> ratio = ClockRatio(s);
  if (s.thermal_share) {
    if (*s.thermal_share < kThermalMinShare) return std::nullopt;
    b.Uses("clock_reasons");
    b.AtLeast("thermal_reason_share", *s.thermal_share, kThermalMinShare, 0.3, "ratio");
    if (!s.reasons_from_counters) b.Discount(kBitsQuality);
  } else {
    // Fallback: no reasons at all; temperature and clock must both say so.
    if (!near || !ratio || *ratio > kThrottledClockRatio || s.busy_share < 0.5) {
      return std::nullopt;
    }
    b.Fallback();
    b.AtMost("sm_clock_ratio", *ratio, kThrottledClockRatio, 0.2, "ratio");
  }
  if (s.temp_max && s.slowdown_temp) {
    b.Uses("gpu_temp");
    b.AtLeast("temperature_max", *s.temp_max, *s.slowdown_temp - kNearSlowdownC, kNearSlowdownC,
              "C");
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
  return b.Build("thermal throttling: " + share + temp + clock,
                 "Check airflow and fans (blocked inlet, failed fan, hot aisle), lower the "
                 "power cap a little to stay below slowdown, spread load across GPUs.");
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
    if (!power || !ratio || *power < kNearPowerLimit || *ratio > kThrottledClockRatio) {
      return std::nullopt;
    }
    b.Fallback();
    b.AtLeast("power_ratio", *power, kNearPowerLimit, 0.03, "ratio");
    b.AtMost("sm_clock_ratio", *ratio, kThrottledClockRatio, 0.2, "ratio");
    why = "drawing at its power limit with a low clock";
  }
  if (power) {
    b.Uses("power_usage"), b.Uses("power_limit");
    b.Note("power_mean", *s.power_mean_w, "W");
    b.Note("power_limit", *s.power_limit_w, "W");
    why += fmt::format(", {:.0f} W against a {:.0f} W limit", *s.power_mean_w, *s.power_limit_w);
  }
  ClockEvidence(s, b);
  if (ratio)
    why += fmt::format(", SM clock {:.0f} of {:.0f} MHz", *s.clock_mean_mhz, *s.clock_max_mhz);
  return b.Build("power capped: " + why,
                 "Check the enforced power limit (nvidia-smi -q -d POWER) against the default; "
                 "a brake points at the PSU or rack power budget.");
}

}  // namespace gpuscope::analysis
