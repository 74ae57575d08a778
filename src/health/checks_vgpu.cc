// The licence check of a vGPU guest: NVIDIA runs an unlicensed vGPU at full
// capability for a grace period, then restricted (CUDA work slows down or
// stops). Only a guest reads a licence, so elsewhere the check is not
// evaluated and not exported.
#include <fmt/format.h>

#include "health/checks_internal.h"
#include "nvml/device.h"

namespace gpuscope::health::internal {

void CheckLicense(const GpuInput& in, CheckResult& r) {
  const std::optional<double> state = in.sample.Find(Metric::kVgpuLicenseState);
  r.evaluated = state.has_value();
  if (!r.evaluated) return;
  const auto code = static_cast<unsigned>(*state);
  constexpr std::string_view kRenew =
      "Check the guest's licence client (nvidia-gridd: journalctl -u nvidia-gridd, "
      "/etc/nvidia/gridd.conf) and that it reaches the licence server; see the runbook "
      "GpuVgpuUnlicensed.";
  switch (code) {
    case nvml::kGuestLicenseLicensed:
      r.Note("vGPU licensed");
      return;
    case nvml::kGuestLicenseGrace:
      r.Raise(Verdict::kWarn,
              fmt::format("vGPU unlicensed, in the grace period: full capability for at most "
                          "{} minutes after the licence lapsed, then restricted",
                          Num(nvml::kVgpuLicenseGraceSeconds / 60)),
              kRenew);
      return;
    case nvml::kGuestLicenseRestricted:
    case nvml::kGuestLicenseUnlicensed:
      r.Raise(Verdict::kFail,
              code == nvml::kGuestLicenseRestricted
                  ? "vGPU unlicensed past the grace period: running restricted"
                  : "vGPU unlicensed (no licence expiry known): restricted after the grace "
                    "period",
              kRenew);
      return;
    default:
      r.Raise(Verdict::kWarn,
              fmt::format("vGPU licence state {} (unknown or not yet initialized)", code), kRenew);
  }
}

}  // namespace gpuscope::health::internal
