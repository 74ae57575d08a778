// Physics of the simulator: determinism, energy as the integral of power,
// thermal throttling under a cooling failure, power capping.
#include <cmath>
#include <vector>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

class SimPhysicsTest : public SimTest {
 protected:
  // Everything a sampler would read from GPU i, as numbers.
  std::vector<double> Readings(unsigned i) {
    nvmlDevice_t d = Device(i);
    std::vector<double> v;
    nvmlUtilization_t u{};
    EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &u), 0);
    unsigned long long energy = 0;
    EXPECT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(d, &energy), 0);
    nvmlMemory_t mem{};
    EXPECT_EQ(nv.nvmlDeviceGetMemoryInfo(d, &mem), 0);
    unsigned tx = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPcieThroughput(d, 0, &tx), 0);
    nvmlFieldValue_t f[2] = {};
    f[0].fieldId = 138;
    f[0].scopeId = 0xFFFFFFFF;
    f[1].fieldId = 78;
    EXPECT_EQ(nv.nvmlDeviceGetFieldValues(d, 2, f), 0);
    v = {
        double(PowerMw(d)), double(Temp(d)),           double(SmClock(d)),       double(Reasons(d)),
        double(u.gpu),      double(u.memory),          double(energy),           double(mem.used),
        double(tx),         double(f[0].value.ullVal), double(f[1].value.ullVal)};
    return v;
  }

  std::string Scenario(const std::string& name, const std::string& faults) {
    return WriteTempFile(name + ".yaml", R"(seed: 5
gpus:
  - model: h100-sxm
    workload:
      - {at: 0, kind: training}
    faults:
)" + faults);
  }
};

TEST_F(SimPhysicsTest, SameScenarioSeedAndTimeGiveIdenticalValues) {
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "37.3"}}), 0);
  std::vector<std::vector<double>> first;
  for (unsigned i = 0; i < 8; ++i) first.push_back(Readings(i));
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  ASSERT_EQ(Start("training-8xh100", {{"GPUSCOPE_SIM_FROZEN_TIME", "37.3"}}), 0);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(Readings(i), first[i]) << "gpu " << i;
  // Another time gives other values (noise, growing counters).
  nv.SetTime(80);
  EXPECT_NE(Readings(0), first[0]);
  EXPECT_DOUBLE_EQ(nv.GetTime(), 80);
  // Going back in time recomputes the same state.
  nv.SetTime(37.3);
  EXPECT_EQ(Readings(0), first[0]);
}

TEST_F(SimPhysicsTest, EnergyIsTheIntegralOfPower) {
  ASSERT_EQ(Start("mixed-node", {{"GPUSCOPE_SIM_FROZEN_TIME", "10"}}), 0);
  nvmlDevice_t d = Device(2);  // bursty inference: power varies
  unsigned long long e0 = 0, e1 = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(d, &e0), 0);
  double integral_mj = 0;
  for (int k = 1; k <= 600; ++k) {
    nv.SetTime(10 + k * 0.1);
    nvmlFieldValue_t f{};
    f.fieldId = 186;  // instantaneous power of the step just integrated
    ASSERT_EQ(nv.nvmlDeviceGetFieldValues(d, 1, &f), 0);
    ASSERT_EQ(f.nvmlReturn, 0);
    integral_mj += f.value.uiVal * 0.1;
  }
  ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(d, &e1), 0);
  EXPECT_NEAR(double(e1 - e0), integral_mj, integral_mj * 0.002);
  EXPECT_GT(integral_mj, 60 * 75 * 1000.0);  // above idle power for 60 s
}

TEST_F(SimPhysicsTest, CoolingFailureThrottlesThermally) {
  std::string path = Scenario("cooling", "      - {at: 20, kind: cooling-failure, factor: 3}\n");
  ASSERT_EQ(Start(path, {{"GPUSCOPE_SIM_FROZEN_TIME", "19"}}), 0);
  nvmlDevice_t d = Device(0);
  unsigned slowdown = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(d, 1, &slowdown), 0);
  EXPECT_EQ(slowdown, 89u);
  unsigned before = Temp(d);
  EXPECT_LT(before, 75u);
  EXPECT_EQ(Reasons(d) & 0x60, 0u);
  EXPECT_EQ(SmClock(d), 1980u);
  nv.SetTime(40);
  EXPECT_GT(Temp(d), before + 10);  // climbing
  nv.SetTime(300);
  EXPECT_GE(Temp(d), slowdown - 1);
  EXPECT_EQ(Reasons(d) & 0x60, 0x60u);  // HW and SW thermal slowdown
  EXPECT_LT(SmClock(d), 1980u * 8 / 10);
  nvmlFieldValue_t f{};
  f.fieldId = 75;  // thermal violation time
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(d, 1, &f), 0);
  EXPECT_GT(f.value.ullVal, 100ull * 1000000000);
}

TEST_F(SimPhysicsTest, PowerCapSetsSwPowerCap) {
  std::string path = Scenario("cap", "      - {at: 10, kind: power-cap, watts: 400}\n");
  ASSERT_EQ(Start(path, {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}), 0);
  nvmlDevice_t d = Device(0);
  unsigned limit = 0;
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(d, &limit), 0);
  EXPECT_EQ(limit, 700000u);
  EXPECT_EQ(Reasons(d) & 0x4, 0u);
  EXPECT_GT(PowerMw(d), 500000u);
  nv.SetTime(30);
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(d, &limit), 0);
  EXPECT_EQ(limit, 400000u);
  EXPECT_EQ(Reasons(d) & 0x4, 0x4u);
  EXPECT_LE(PowerMw(d), 401000u);
  EXPECT_LT(SmClock(d), 1980u);
}

TEST_F(SimPhysicsTest, IdleGpusReportGpuIdle) {
  ASSERT_EQ(Start("idle-node", {{"GPUSCOPE_SIM_FROZEN_TIME", "3"}}), 0);
  nvmlDevice_t d = Device(5);
  EXPECT_EQ(Reasons(d), 0x1u);
  EXPECT_NEAR(PowerMw(d), 70000.0, 1000.0);
  EXPECT_EQ(SmClock(d), 345u);
}

}  // namespace
}  // namespace gpuscope::sim::testing
