// vGPU on the simulator (issue 43): a host board's virtual GPUs with their
// VMs, types, framebuffers, licences and scheduler shares; a guest's licence;
// nothing of either on bare metal.
#include <gtest/gtest.h>

#include <map>

#include "collect/readers.h"
#include "collect/sampler.h"
#include "collect_test_support.h"

namespace gpuscope::collect {
namespace {

using testing::ScopedEnv;
using testing::SimOptions;

std::string Scenario(const std::string& name) {
  return test_support::BinaryDir() + "/sim/scenarios/vgpu/" + name + ".yaml";
}

TEST(CollectVgpuTest, GuestLicenseStateFollowsTheGracePeriod) {
  nvml::GuestLicense license;
  license.licensed = true;
  EXPECT_EQ(GuestLicenseState(license, 1000), nvml::kGuestLicenseLicensed);
  license.licensed = false;
  EXPECT_EQ(GuestLicenseState(license, 1000), nvml::kGuestLicenseUnlicensed);  // no expiry
  license.expires_unix = 1000;
  EXPECT_EQ(GuestLicenseState(license, 1000), nvml::kGuestLicenseGrace);
  EXPECT_EQ(GuestLicenseState(license, 1000 + 19 * 60), nvml::kGuestLicenseGrace);
  EXPECT_EQ(GuestLicenseState(license, 1000 + 20 * 60), nvml::kGuestLicenseRestricted);
}

TEST(CollectVgpuTest, HostBoardsListTheirVms) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", Scenario("host"));
  Sampler sampler(SimOptions());
  sampler.SampleOnce(true);
  SnapshotPtr snap = sampler.SampleOnce(true);  // the second read has utilization samples
  ASSERT_TRUE(snap->nvml_up) << snap->nvml_error;
  ASSERT_EQ(snap->samples.size(), 2u);
  std::map<std::string, const VgpuInstance*> by_vm;
  for (const GpuSample& s : snap->samples) {
    EXPECT_EQ(s.Get(Metric::kVirtualizationMode), 3);
    EXPECT_FALSE(s.Has(Metric::kVgpuLicenseState));  // a host has no licence of its own
    ASSERT_EQ(s.vgpus.size(), 3u);
    for (const VgpuInstance& v : s.vgpus) by_vm[v.vm_id] = &v;
  }
  EXPECT_EQ(snap->samples[0].vgpu_scheduler_policy, 1u);  // best effort
  EXPECT_EQ(snap->samples[1].vgpu_scheduler_policy, 2u);  // equal share
  ASSERT_EQ(by_vm.size(), 6u);
  const VgpuInstance& first = *by_vm.at("0c8f1a2e-1111-4a7b-9d3e-5a1b2c3d4e01");
  EXPECT_EQ(first.type, "GRID H100-20C");
  EXPECT_EQ(first.fb_total_bytes, 20ull << 30);
  EXPECT_EQ(first.fb_used_bytes, 14ull << 30);
  EXPECT_EQ(first.license_state, nvml::kGuestLicenseLicensed);
  EXPECT_FALSE(first.uuid.empty());
  // Best effort over demands 0.8 + 0.6 + 0.6: each scaled to its share of 2.0.
  ASSERT_TRUE(first.sm_utilization.has_value());
  EXPECT_NEAR(*first.sm_utilization, 0.4, 0.011);
  const VgpuInstance& idle = *by_vm.at("0c8f1a2e-6666-4a7b-9d3e-5a1b2c3d4e06");
  EXPECT_EQ(idle.sm_utilization, 0.0);
  EXPECT_EQ(idle.fb_used_bytes, 12ull << 30);
}

TEST(CollectVgpuTest, GuestReadsItsLicence) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", Scenario("guest"));
  ScopedEnv start("GPUSCOPE_SIM_START_TIME", "100");  // the licence lapsed at 5 s
  Sampler sampler(SimOptions());
  SnapshotPtr snap = sampler.SampleOnce(true);
  ASSERT_EQ(snap->samples.size(), 1u);
  const GpuSample& s = snap->samples[0];
  EXPECT_EQ(s.Get(Metric::kVirtualizationMode), 2);
  EXPECT_EQ(s.Get(Metric::kVgpuLicensed), 0);
  EXPECT_EQ(s.Get(Metric::kVgpuLicenseState), nvml::kGuestLicenseGrace);
  EXPECT_TRUE(s.vgpus.empty());
}

TEST(CollectVgpuTest, BareMetalHasNeither) {
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  Sampler sampler(SimOptions());
  SnapshotPtr snap = sampler.SampleOnce(true);
  for (const GpuSample& s : snap->samples) {
    EXPECT_EQ(s.Get(Metric::kVirtualizationMode), 0);
    EXPECT_FALSE(s.Has(Metric::kVgpuLicensed));
    EXPECT_TRUE(s.vgpus.empty());
  }
}

}  // namespace
}  // namespace gpuscope::collect
