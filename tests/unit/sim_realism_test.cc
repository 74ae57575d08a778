// Behaviour real boards have: counters that run since the driver loaded
// (driver_uptime_s), PCIe link parking at idle, utilization averaged over the
// driver's sample period, uneven NVLink traffic, HBM slowdown, brief power
// bursts over the limit, and no whole-GPU utilization with MIG on.
#include "sim_test_support.h"
#include "test_paths.h"

namespace gpuscope::sim::testing {
namespace {

std::string Shipped(const std::string& name) {
  return test_support::SourceDir() + "/sim/scenarios/" + name + ".yaml";
}

class SimRealismTest : public SimTest {
 protected:
  unsigned long long Field(nvmlDevice_t d, unsigned id, unsigned scope = 0) {
    nvmlFieldValue_t f{};
    f.fieldId = id;
    f.scopeId = scope;
    EXPECT_EQ(nv.nvmlDeviceGetFieldValues(d, 1, &f), 0);
    EXPECT_EQ(f.nvmlReturn, 0) << "field " << id;
    return f.valueType == 1 ? f.value.uiVal : f.value.ullVal;
  }
  unsigned long long Energy(nvmlDevice_t d) {
    unsigned long long mj = 0;
    EXPECT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(d, &mj), 0);
    return mj;
  }
  unsigned long long Ecc(nvmlDevice_t d, int type, int counter) {
    unsigned long long n = 99;
    EXPECT_EQ(nv.nvmlDeviceGetTotalEccErrors(d, type, counter, &n), 0);
    return n;
  }
  unsigned Gen(nvmlDevice_t d) {
    unsigned gen = 0;
    EXPECT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(d, &gen), 0);
    return gen;
  }
  unsigned Util(nvmlDevice_t d) {
    nvmlUtilization_t u{};
    EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &u), 0);
    return u.gpu;
  }
  std::string Training(const std::string& top) {
    return WriteTempFile("uptime.yaml", top +
                                            "gpus:\n  - model: h100-sxm\n    workload:\n"
                                            "      - {at: 0, kind: training}\n");
  }
};

TEST_F(SimRealismTest, CountersAtTheFirstCallHoldTheDriversHistory) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "0"}}), 0);
  nvmlDevice_t d = Device(0);
  // Three days at 70..630 W: far more than zero, less than three days flat out.
  const double day_idle_mj = 86400.0 * 70 * 1000;
  EXPECT_GT(double(Energy(d)), 3 * day_idle_mj);
  EXPECT_LT(double(Energy(d)), 3 * 86400.0 * 700 * 1000);
  EXPECT_GT(Field(d, 74), 0ull);  // power violation time, ns
  EXPECT_GT(Field(d, 78), 0ull);  // low-utilization time, ns
  unsigned replays = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays), 0);
  EXPECT_GE(replays, 3u);
  EXPECT_GT(Field(d, 138, 0xFFFFFFFF), 0ull);  // NVLink TX KiB since load
  EXPECT_GT(Field(d, 138, 3), 0ull);
  EXPECT_GT(Ecc(d, 0, 1), 0ull);  // corrected, aggregate (lifetime)
  EXPECT_EQ(Ecc(d, 0, 0), 0ull);  // volatile: none since the driver loaded
  EXPECT_EQ(Ecc(d, 1, 1), 0ull);  // a healthy board: no uncorrected errors
  EXPECT_EQ(Ecc(d, 1, 0), 0ull);
}

TEST_F(SimRealismTest, DriverUptimeKeySetsTheHistory) {
  ASSERT_EQ(Start(Training("driver_uptime_s: 0\n"), {{"GPUSCOPE_SIM_FROZEN_TIME", "0"}}), 0);
  nvmlDevice_t d = Device(0);
  EXPECT_EQ(Energy(d), 0ull);  // a driver loaded just now
  EXPECT_EQ(Field(d, 74), 0ull);
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  ASSERT_EQ(Start(Training("driver_uptime_s: 864000\n"), {{"GPUSCOPE_SIM_FROZEN_TIME", "0"}}), 0);
  unsigned long long ten_days = Energy(Device(0));
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  ASSERT_EQ(Start(Training("driver_uptime_s: 86400\n"), {{"GPUSCOPE_SIM_FROZEN_TIME", "0"}}), 0);
  unsigned long long one_day = Energy(Device(0));
  EXPECT_NEAR(double(ten_days) / double(one_day), 10, 0.01);
  // Time then adds to the history.
  nv.SetTime(10);
  EXPECT_GT(Energy(Device(0)), one_day + 10 * 500 * 1000ull);
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  EXPECT_NE(Start(Training("driver_uptime_s: -5\n")), 0);
}

TEST_F(SimRealismTest, IdleLinkParksAndRetrainsUnderLoad) {
  ASSERT_EQ(Start(Shipped("link-parking"), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t idle = Device(0), job = Device(1), busy = Device(2);
  unsigned width = 0, max_gen = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkWidth(idle, &width), 0);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(idle, &max_gen), 0);
  EXPECT_EQ(Gen(idle), 1u);
  EXPECT_EQ(width, 16u);  // parking lowers the speed, never the width
  EXPECT_EQ(max_gen, 5u);
  EXPECT_EQ(Gen(job), 1u);
  EXPECT_EQ(Gen(busy), 5u);
  nv.SetTime(10.5);
  EXPECT_EQ(Gen(job), 5u);  // retrained at the first busy step
  nv.SetTime(40.5);
  EXPECT_EQ(Gen(job), 5u);  // idle for under a second: not yet parked
  nv.SetTime(42);
  EXPECT_EQ(Gen(job), 1u);
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  std::string fixed =
      WriteTempFile("noparking.yaml", "gpus:\n  - model: h100-sxm\n    pcie_parking: false\n");
  ASSERT_EQ(Start(fixed, {{"GPUSCOPE_SIM_FROZEN_TIME", "30"}}), 0);
  EXPECT_EQ(Gen(Device(0)), 5u);
}

TEST_F(SimRealismTest, UtilizationIsAveragedOverTheSamplePeriod) {
  ASSERT_EQ(Start(Shipped("averaged-utilization"), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t pulsed = Device(0), ramp = Device(2);
  // Instantaneously 0 or 98%; the driver's 1 s average sits between.
  double sum = 0;
  int n = 0;
  for (double t = 5; t < 7; t += 0.1, ++n) {
    nv.SetTime(t);
    unsigned u = Util(pulsed);
    EXPECT_GE(u, 25u) << "t=" << t;
    EXPECT_LE(u, 75u) << "t=" << t;
    sum += u;
  }
  EXPECT_NEAR(sum / n, 49, 5);
  nv.SetTime(10.5);  // half of the last second was busy
  EXPECT_NEAR(Util(ramp), 49, 11);
  nv.SetTime(11.5);
  EXPECT_EQ(Util(ramp), 98u);
}

TEST_F(SimRealismTest, PowerBurstsHitTheLimitBriefly) {
  ASSERT_EQ(Start(Shipped("averaged-utilization"), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t d = Device(1);
  EXPECT_EQ(Reasons(d) & 0x4, 0u);  // between bursts
  unsigned long long viol = Field(d, 74);
  nv.SetTime(10.3);                     // inside the burst at 10..10.5 s
  EXPECT_EQ(Reasons(d) & 0x4, 0x4u);    // SwPowerCap
  EXPECT_EQ(Field(d, 186), 700000ull);  // instantaneous power at the limit
  nv.SetTime(12);
  EXPECT_EQ(Reasons(d) & 0x4, 0u);
  EXPECT_NEAR(double(Field(d, 74) - viol), 0.5e9, 0.11e9);  // 0.5 s capped
}

TEST_F(SimRealismTest, HotHbmSlowsTheBoard) {
  ASSERT_EQ(Start(Shipped("hbm-throttle"), {{"GPUSCOPE_SIM_FROZEN_TIME", "60"}}), 0);
  nvmlDevice_t normal = Device(0), hot = Device(1);
  EXPECT_EQ(Reasons(normal) & 0x60, 0u);
  EXPECT_EQ(SmClock(normal), 1980u);
  EXPECT_GE(Field(hot, 82), 93ull);       // memory temperature near its 95 C max
  EXPECT_EQ(Reasons(hot) & 0x60, 0x20u);  // SW thermal only: the die is fine
  EXPECT_LT(Temp(hot), 85u);
  EXPECT_LT(SmClock(hot), 1980u);
  EXPECT_GT(Field(hot, 75), 0ull);  // thermal violation time counts memory slowdown too
}

TEST_F(SimRealismTest, NvlinkTrafficIsUnevenAcrossLinks) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "0"}}), 0);
  nvmlDevice_t d = Device(0);
  std::vector<double> before, after;
  for (unsigned l = 0; l < 18; ++l) before.push_back(double(Field(d, 138, l)));
  double total0 = double(Field(d, 138, 0xFFFFFFFF));
  nv.SetTime(10);
  double lo = 1e300, hi = 0, sum = 0;
  for (unsigned l = 0; l < 18; ++l) {
    double delta = double(Field(d, 138, l)) - before[l];
    lo = std::min(lo, delta), hi = std::max(hi, delta), sum += delta;
  }
  EXPECT_GT(hi / lo, 1.3);
  EXPECT_NEAR(sum, double(Field(d, 138, 0xFFFFFFFF)) - total0, 18);  // rounding per link
  EXPECT_NEAR(sum * 1024 / 10, 90e9, 90e9 * 0.05);                   // the scenario: 90 GB/s in all
}

TEST_F(SimRealismTest, MigParentHasNoUtilization) {
  ASSERT_EQ(Start("mixed-node", {{"GPUSCOPE_SIM_FROZEN_TIME", "10"}}), 0);
  nvmlUtilization_t u{};
  EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(Device(7), &u), 3);  // MIG on
  EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(Device(0), &u), 0);
}

}  // namespace
}  // namespace gpuscope::sim::testing
