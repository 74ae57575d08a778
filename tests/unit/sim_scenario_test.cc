// Scenario loading: shipped scenarios, malformed YAML with file:line
// messages, forced init errors, init reference counting and re-init.
#include <set>
#include <string>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

using SimScenarioTest = SimTest;

TEST_F(SimScenarioTest, CallsBeforeInitAnswerUninitialized) {
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), 1);
  EXPECT_EQ(nv.nvmlShutdown(), 1);
}

TEST_F(SimScenarioTest, ShippedScenariosLoad) {
  for (const char* name : {"idle-node", "training-8xh100", "mixed-node", "fault-drill"}) {
    ASSERT_EQ(Start(name), 0) << name << ": " << nv.LastError();
    unsigned n = 0;
    EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), 0);
    EXPECT_EQ(n, 8u) << name;
    EXPECT_EQ(nv.nvmlShutdown(), 0);
  }
}

TEST_F(SimScenarioTest, DefaultScenarioIsTraining) {
  ASSERT_EQ(nv.nvmlInit_v2(), 0);
  char version[80];
  ASSERT_EQ(nv.nvmlSystemGetDriverVersion(version, sizeof version), 0);
  EXPECT_STREQ(version, "570.133.20");
  int cuda = 0;
  ASSERT_EQ(nv.nvmlSystemGetCudaDriverVersion_v2(&cuda), 0);
  EXPECT_EQ(cuda, 12080);
  unsigned count = 1;
  nvmlProcessInfo_v2_t info[1];
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(Device(6), &count, info), 0);
  EXPECT_EQ(info[0].pid, 41206u);
}

TEST_F(SimScenarioTest, UnknownKeyFailsInitWithFileAndLine) {
  std::string path = WriteTempFile("badkey.yaml", R"(seed: 1
gpus:
  - model: h100-sxm
    workload:
      - {at: 0, kind: training, utilisation: 0.5}
)");
  EXPECT_EQ(Start(path), 2);  // NVML_ERROR_INVALID_ARGUMENT: a bad scenario
  std::string error = nv.LastError();
  EXPECT_EQ(error.rfind(path + ":5: ", 0), 0u) << error;
  EXPECT_NE(error.find("utilisation"), std::string::npos) << error;
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), 1);  // init failed: still uninitialised
}

TEST_F(SimScenarioTest, BadValuesAreRejectedWithTheirLine) {
  struct Case {
    const char* yaml;
    int line;
    const char* needle;
  } cases[] = {
      {"gpus:\n  - model: h100-sxm\n    power_limit_w: 900\n", 3, "out of range"},
      {"gpus:\n  - model: h101\n", 2, "h101"},
      {"gpus:\n  - model: l4\n    mig:\n      instances: [1g.10gb]\n", 4, "MIG"},
      {"seed: 1\ngpus:\n  - model: a100-sxm\n    faults:\n      - {at: 1, kind: meltdown}\n", 5,
       "meltdown"},
      {"gpus:\n  - model: h100-sxm\n    workload: [{at: 0, kind: training, util: high}]\n", 3,
       "high"},
      {"gpus: [\n", 2, ""},
      // /dev/nvidia0 is one GPU's: GPU 1 would default to GPU 0's minor.
      {"gpus:\n  - model: h100-sxm\n    minor_number: 1\n  - model: h100-sxm\n", 4,
       "minor_number 1 of GPU 1 is GPU 0's already"},
      {"gpus:\n  - {model: h100-sxm, count: 2}\n  - model: h100-sxm\n    minor_number: 0\n", 4,
       "minor_number 0 of GPU 2 is GPU 0's"},
      {"gpus:\n  - {model: h100-sxm, count: 2, minor_number: 3}\n", 2, "need count 1"},
  };
  for (const Case& c : cases) {
    std::string path = WriteTempFile("bad.yaml", c.yaml);
    EXPECT_EQ(Start(path), 2) << c.yaml;
    std::string error = nv.LastError();
    EXPECT_EQ(error.rfind(path + ":" + std::to_string(c.line) + ":", 0), 0u) << error;
    EXPECT_NE(error.find(c.needle), std::string::npos) << error;
  }
}

TEST_F(SimScenarioTest, InitErrorEnvForcesTheCode) {
  EXPECT_EQ(Start("idle-node", {{"GPUSCOPE_SIM_INIT_ERROR", "DRIVER_NOT_LOADED"}}), 9);
  setenv("GPUSCOPE_SIM_INIT_ERROR", "NVML_ERROR_NO_PERMISSION", 1);
  EXPECT_EQ(nv.nvmlInit_v2(), 4);
  unsetenv("GPUSCOPE_SIM_INIT_ERROR");
  EXPECT_EQ(nv.nvmlInit_v2(), 0);
}

TEST_F(SimScenarioTest, InitIsReferenceCountedAndReinitSwitchesScenario) {
  ASSERT_EQ(Start("idle-node"), 0);
  ASSERT_EQ(nv.nvmlInitWithFlags(0), 0);
  EXPECT_EQ(nv.nvmlShutdown(), 0);
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), 0);  // one reference left
  EXPECT_EQ(nv.nvmlShutdown(), 0);
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), 1);
  ASSERT_EQ(Start("mixed-node"), 0);
  char name[96];
  ASSERT_EQ(nv.nvmlDeviceGetName(Device(4), name, sizeof name), 0);
  EXPECT_STREQ(name, "NVIDIA L4");
}

TEST_F(SimScenarioTest, IdentityIsDeterministicAndDistinct) {
  ASSERT_EQ(Start("training-8xh100"), 0);
  std::set<std::string> uuids, buses;
  for (unsigned i = 0; i < 8; ++i) {
    char uuid[96], serial[30];
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nv.nvmlDeviceGetUUID(Device(i), uuid, sizeof uuid), 0);
    ASSERT_EQ(nv.nvmlDeviceGetSerial(Device(i), serial, sizeof serial), 0);
    ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(Device(i), &pci), 0);
    EXPECT_EQ(std::string(uuid).size(), 40u);
    EXPECT_EQ(std::string(uuid).rfind("GPU-", 0), 0u);
    EXPECT_EQ(std::string(serial).size(), 13u);
    EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);
    EXPECT_EQ(std::string(pci.busId).size(), 16u);
    EXPECT_EQ(std::string(pci.busIdLegacy).size(), 12u);
    uuids.insert(uuid);
    buses.insert(pci.busId);
    unsigned minor = 99;
    ASSERT_EQ(nv.nvmlDeviceGetMinorNumber(Device(i), &minor), 0);
    EXPECT_EQ(minor, i);
    nvmlDevice_t by_uuid = nullptr;
    ASSERT_EQ(nv.nvmlDeviceGetHandleByUUID(uuid, &by_uuid), 0);
    EXPECT_EQ(by_uuid, Device(i));
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(buses.size(), 8u);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(Device(0), &pci), 0);
  EXPECT_STREQ(pci.busId, "00000000:18:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:18:00.0");
}

// Hosts where /dev/nvidia0 is not NVML's GPU 0 (AMD CPU hosts, some
// multi-socket boards): a scenario permutes the minors, NVML's order stays.
TEST_F(SimScenarioTest, MinorNumbersFollowTheScenario) {
  std::string path = WriteTempFile("minors.yaml", R"(gpus:
  - {model: h100-sxm, minor_number: 2}
  - {model: h100-sxm, minor_number: 0}
  - {model: h100-sxm, minor_number: 1}
  - {model: h100-sxm}
)");
  ASSERT_EQ(Start(path), 0) << nv.LastError();
  const unsigned expected[] = {2, 0, 1, 3};
  for (unsigned i = 0; i < 4; ++i) {
    unsigned minor = 99, index = 99;
    ASSERT_EQ(nv.nvmlDeviceGetMinorNumber(Device(i), &minor), 0);
    EXPECT_EQ(minor, expected[i]) << "GPU " << i;
    ASSERT_EQ(nv.nvmlDeviceGetIndex(Device(i), &index), 0);
    EXPECT_EQ(index, i);
  }
}

}  // namespace
}  // namespace gpuscope::sim::testing
