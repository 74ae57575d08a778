// The license check of a vGPU guest (issue 43): ok while licensed, warn in
// NVIDIA's grace period, fail once restricted or unlicensed; not evaluated
// (so not exported) off a guest.
#include <gtest/gtest.h>

#include "health/checks.h"
#include "health_test_util.h"
#include "nvml/device.h"

namespace gpuscope::health {
namespace {

using testing::HasEvidence;
using testing::HealthyNode;
using testing::kNow;

CheckResult License(const Snapshot& snap) {
  EventState events;
  HealthState state;
  return Evaluate(snap, events, state, kNow, HealthOptions{}).gpus.at(0).Get(Check::kLicense);
}

TEST(VgpuLicenseCheck, NotEvaluatedOffAGuest) {
  const Snapshot snap = HealthyNode(1);
  EXPECT_FALSE(License(snap).evaluated);
  EXPECT_EQ(CheckName(Check::kLicense), "license");
}

TEST(VgpuLicenseCheck, OkWarnFailByState) {
  Snapshot snap = HealthyNode(1);
  snap.samples[0].Set(Metric::kVgpuLicenseState, nvml::kGuestLicenseLicensed);
  CheckResult r = License(snap);
  EXPECT_TRUE(r.evaluated);
  EXPECT_EQ(r.verdict, Verdict::kOk);

  snap.samples[0].Set(Metric::kVgpuLicenseState, nvml::kGuestLicenseGrace);
  r = License(snap);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_TRUE(HasEvidence(r, "grace period"));
  EXPECT_NE(r.action.find("nvidia-gridd"), std::string::npos);

  for (unsigned state : {nvml::kGuestLicenseRestricted, nvml::kGuestLicenseUnlicensed}) {
    snap.samples[0].Set(Metric::kVgpuLicenseState, state);
    r = License(snap);
    EXPECT_EQ(r.verdict, Verdict::kFail) << state;
    EXPECT_TRUE(HasEvidence(r, "unlicensed")) << state;
  }

  snap.samples[0].Set(Metric::kVgpuLicenseState, nvml::kGuestLicenseUnknown);
  EXPECT_EQ(License(snap).verdict, Verdict::kWarn);
}

}  // namespace
}  // namespace gpuscope::health
