#include "baseline/signals.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace gpuscope::baseline {
namespace {

// Whole GPUs (a MIG slice's share of its board is not baselined yet;
// docs/baselines.md); the rules keep those a workload holds (rules.cc).
constexpr std::string_view kSel = R"(gpu_instance="")";
// Throttle reasons that cost throughput (idle and settings reasons are not).
constexpr std::string_view kThrottleReasons =
    "sw_power_cap|hw_slowdown|sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown";

std::string Sel(std::string_view family, std::string_view extra = "") {
  std::string out(family);
  out += "{";
  out += kSel;
  if (!extra.empty()) {
    out += ',';
    out += extra;
  }
  out += '}';
  return out;
}

std::string RateOf(std::string_view family, std::string_view extra = "") {
  return "rate(" + Sel(family, extra) + "[5m])";
}

std::string AvgOf(std::string_view family, std::string_view extra = "") {
  return "avg_over_time(" + Sel(family, extra) + "[5m])";
}

bool ValidName(std::string_view name) {
  if (name.empty() || !std::islower(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<Signal> DefaultSignals() {
  using enum Direction;
  using enum Unit;
  using enum Side;
  std::vector<Signal> s;
  // SM activity from GPM; utilization (kernel time) on GPUs without GPM.
  s.push_back({"sm_active", "SM activity",
               RateOf("gpuscope_sm_active_seconds_total") + " or " +
                   RateOf("gpuscope_gpu_busy_seconds_total"),
               kFalling, 0.02, kRatio, kEfficiency, "GpuWorkloadSmActivityBelowBaseline"});
  s.push_back({"tensor_active", "Tensor activity",
               AvgOf("gpuscope_pipe_active_ratio", R"(pipe="tensor")"), kNone, 0.02, kRatio,
               kEfficiency, ""});
  s.push_back({"dram_active", "DRAM activity",
               AvgOf("gpuscope_dram_active_ratio") + " or " +
                   AvgOf("gpuscope_memory_copy_utilization_ratio"),
               kNone, 0.02, kRatio, kEfficiency, ""});
  s.push_back({"memory_used_ratio", "Memory used",
               AvgOf("gpuscope_memory_used_bytes") + " / " + AvgOf("gpuscope_memory_total_bytes"),
               kNone, 0.02, kRatio, kEfficiency, ""});
  s.push_back({"power_watts", "Power", RateOf("gpuscope_energy_joules_total"), kNone, 10, kWatts,
               kEfficiency, ""});
  s.push_back({"idle_ratio", "Idle share", RateOf("gpuscope_gpu_idle_seconds_total"), kRising, 0.02,
               kRatio, kEfficiency, "GpuWorkloadIdleAboveBaseline"});
  s.push_back({"temperature_celsius", "Temperature", AvgOf("gpuscope_gpu_temperature_celsius"),
               kRising, 1, kCelsius, kHealth, "GpuWorkloadTemperatureAboveBaseline"});
  // The lean export profile writes a throttle reason only once it has been
  // non-zero: a GPU without one throttles 0, not "unknown" (else its first
  // throttling would start a fresh baseline, warming up, instead of alerting).
  s.push_back({"throttle_ratio", "Throttle share",
               "clamp_max(sum without (reason) (" +
                   RateOf("gpuscope_clock_throttle_seconds_total",
                          "reason=~\"" + std::string(kThrottleReasons) + "\"") +
                   "), 1) or " + RateOf("gpuscope_gpu_busy_seconds_total") + " * 0",
               kRising, 0.02, kRatio, kHealth, "GpuWorkloadThrottleAboveBaseline"});
  return s;
}

Result<Signal> ParseSignal(std::string_view spec) {
  std::string_view parts[3];
  std::string_view rest = spec;
  for (auto& part : parts) {
    size_t colon = rest.find(':');
    if (colon == std::string_view::npos) {
      return Status::InvalidArgument("--signal \"" + std::string(spec) +
                                     "\": want NAME:DIRECTION:FLOOR:EXPR");
    }
    part = rest.substr(0, colon);
    rest.remove_prefix(colon + 1);
  }
  Signal s;
  s.name = std::string(parts[0]);
  s.title = s.name;
  s.per_gpu = std::string(rest);
  if (!ValidName(s.name)) {
    return Status::InvalidArgument("--signal: name \"" + s.name +
                                   "\" must be lower case letters, digits and _");
  }
  if (parts[1] == "falling") {
    s.bad = Direction::kFalling;
  } else if (parts[1] == "rising") {
    s.bad = Direction::kRising;
  } else if (parts[1] != "none") {
    return Status::InvalidArgument("--signal " + s.name + ": direction \"" + std::string(parts[1]) +
                                   "\" is not falling, rising or none");
  }
  auto [end, ec] =
      std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), s.spread_floor);
  if (ec != std::errc() || end != parts[2].data() + parts[2].size() || !(s.spread_floor > 0) ||
      !std::isfinite(s.spread_floor)) {
    return Status::InvalidArgument("--signal " + s.name + ": floor \"" + std::string(parts[2]) +
                                   "\" is not a number > 0");
  }
  if (s.per_gpu.find_first_not_of(" \t") == std::string::npos) {
    return Status::InvalidArgument("--signal " + s.name + ": empty expression");
  }
  return s;
}

std::string AlertName(const Signal& signal) {
  if (!signal.alert.empty()) return signal.alert;
  std::string out = "GpuWorkload";
  bool upper = true;
  for (char c : signal.name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + (signal.bad == Direction::kFalling ? "BelowBaseline" : "AboveBaseline");
}

std::string_view DirectionName(Direction direction) {
  switch (direction) {
    case Direction::kFalling:
      return "falling";
    case Direction::kRising:
      return "rising";
    case Direction::kNone:
      break;
  }
  return "none";
}

std::string_view SideName(Side side) { return side == Side::kHealth ? "health" : "efficiency"; }

}  // namespace gpuscope::baseline
