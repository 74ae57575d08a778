// The fabric check: a GB200-class GPU whose NVLink fabric registration has
// not completed, failed, or whose fabric health mask reports a problem cannot
// run the rack-wide jobs it serves, while its own metrics look healthy.
// Verdicts follow DCGM's health module: registration in progress warns (a
// node that just booted trains its links for tens of seconds), not started or
// failed fails; an unhealthy route or an incorrect configuration fails,
// degraded bandwidth and recoveries in progress warn.
#include <fmt/format.h>

#include "health/checks_internal.h"

namespace gpuscope::health::internal {
namespace {

constexpr std::string_view kReregister =
    "Check the node's NVLink fabric software (IMEX / NVLink management on the switch trays) and "
    "its logs; reset the GPU or reboot the node to register again; drain the node if it stays.";

std::string_view ConfigName(double code) {
  switch (static_cast<int>(code)) {
    case 2:
      return "incorrect system GUID";
    case 3:
      return "incorrect chassis serial number";
    case 4:
      return "no partition";
    case 5:
      return "insufficient NVLinks";
    default:
      return "unknown reason";
  }
}

void JudgeIssues(const GpuSample& s, CheckResult& r) {
  using enum Metric;
  if (s.Find(kFabricRouteUnhealthy).value_or(0) == 1) {
    r.Raise(Verdict::kFail, "fabric route unhealthy", kReregister);
  }
  if (auto config = s.Find(kFabricIncorrectConfig); config && *config > 1) {
    r.Raise(Verdict::kFail,
            fmt::format("fabric incorrect configuration: {} (code {})", ConfigName(*config),
                        Num(*config)),
            "Fix the rack's fabric configuration (partition, chassis, NVLink cabling) with the "
            "NVLink management software; drain the node until it is fixed.");
  }
  if (s.Find(kFabricDegradedBandwidth).value_or(0) == 1) {
    r.Raise(Verdict::kWarn, "fabric bandwidth degraded",
            "Find the down or degraded NVLinks (gpuscope_nvlink_link_active, switch tray logs); "
            "schedule a repair; jobs spanning the rack run slower meanwhile.");
  }
  if (s.Find(kFabricRouteRecovery).value_or(0) == 1) {
    r.Raise(Verdict::kWarn, "fabric route recovery in progress",
            "Wait for the recovery; if it stays, treat it as an unhealthy route.");
  }
  if (s.Find(kFabricAccessTimeoutRecovery).value_or(0) == 1) {
    r.Raise(Verdict::kWarn, "fabric access-timeout recovery in progress",
            "Wait for the recovery; if it repeats, check the GPU's XIDs and the switch trays.");
  }
}

}  // namespace

void CheckFabric(const GpuInput& in, CheckResult& r) {
  using enum Metric;
  const GpuSample& s = in.sample;
  const std::optional<double> state = s.Find(kFabricState);
  if (!state) return;  // no fabric: not evaluated
  r.evaluated = true;
  const std::string clique =
      s.Has(kFabricCliqueId) ? fmt::format(", clique {}", Num(s.Get(kFabricCliqueId))) : "";
  if (*state == 1) {
    r.Raise(Verdict::kFail, "fabric registration not started" + clique, kReregister);
  } else if (*state == 2) {
    r.Raise(Verdict::kWarn, "fabric registration in progress" + clique,
            "Normal for a minute after boot or GPU reset while the NVLinks train; if it stays, "
            "treat it as a failed registration.");
  } else if (s.Find(kFabricErrorCode).value_or(0) != 0) {
    r.Raise(Verdict::kFail,
            fmt::format("fabric registration failed: NVML code {}{}", Num(s.Get(kFabricErrorCode)),
                        clique),
            kReregister);
  } else {
    r.Note("fabric registration completed" + clique);
  }
  JudgeIssues(s, r);
}

}  // namespace gpuscope::health::internal
