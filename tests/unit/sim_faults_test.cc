// Fault injection through the control file and scenario-timed faults: lost
// GPUs, XID events, hangs and failing calls confined to one GPU, call
// statistics.
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

using std::chrono::milliseconds;

class SimFaultsTest : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    control_ = WriteTempFile("control", "");
  }
  nvmlReturn_t StartWithControl(const std::string& scenario) {
    return Start(scenario, {{"GPUSCOPE_SIM_CONTROL", control_}});
  }
  void Command(const std::string& line) { std::ofstream(control_, std::ios::app) << line << "\n"; }

  // Polls until pred holds (the control thread applies lines within ~20 ms).
  template <typename Pred>
  bool Eventually(Pred pred) {
    for (int i = 0; i < 300; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return pred();
  }

  nvmlReturn_t PowerCall(unsigned gpu) {
    unsigned mw = 0;
    return nv.nvmlDeviceGetPowerUsage(Device(gpu), &mw);
  }

  std::string control_;
};

TEST_F(SimFaultsTest, LostGpuAnswersGpuIsLostAndComesBackWhenCleared) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  nvmlDevice_t d2 = Device(2);
  Command("inject 2 lost");
  unsigned mw = 0;
  ASSERT_TRUE(Eventually([&] { return nv.nvmlDeviceGetPowerUsage(d2, &mw) == 15; }));
  char uuid[96];
  EXPECT_EQ(nv.nvmlDeviceGetUUID(d2, uuid, sizeof uuid), 15);
  EXPECT_EQ(PowerCall(1), 0);  // the others keep answering
  EXPECT_EQ(PowerCall(3), 0);
  Command("clear 2 lost");
  EXPECT_TRUE(Eventually([&] { return nv.nvmlDeviceGetPowerUsage(d2, &mw) == 0; }));
}

TEST_F(SimFaultsTest, InjectedXidIsDeliveredThroughEventSetWait) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  nvmlDevice_t d1 = Device(1);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), 0);
  unsigned long long supported = 0;
  ASSERT_EQ(nv.nvmlDeviceGetSupportedEventTypes(d1, &supported), 0);
  EXPECT_EQ(supported & 0xC00B, 0xC00Bull);  // XID, SBE, DBE, unavailable, recovery
  EXPECT_EQ(nv.nvmlDeviceRegisterEvents(d1, 0x8 | 0x10, set), 3);  // Clock is unsupported
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(d1, supported, set), 0);
  nvmlEventData_t data{};
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &data, 50), 10);  // nothing yet
  Command("inject 1 xid 79");
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &data, 5000), 0);
  EXPECT_EQ(data.device, d1);
  EXPECT_EQ(data.eventType, 0x8ull);
  EXPECT_EQ(data.eventData, 79ull);
  EXPECT_EQ(data.gpuInstanceId, 0xFFFFFFFFu);
  Command("inject 1 ecc dbe");
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &data, 5000), 0);
  EXPECT_EQ(data.eventType, 0x2ull);
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &data, 5000), 0);
  EXPECT_EQ(data.eventData, 48ull);
  unsigned corr = 9, unc = 0, pending = 0, failure = 9;
  ASSERT_EQ(nv.nvmlDeviceGetRemappedRows(d1, &corr, &unc, &pending, &failure), 0);
  EXPECT_EQ(unc, 1u);
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(nv.nvmlEventSetFree(set), 0);
}

// `inject <gpu> xid-storm <xid> [rate]`: XIDs at the rate until cleared.
TEST_F(SimFaultsTest, InjectedXidStormFiresAtItsRateUntilCleared) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), 0);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Device(4), 0x8, set), 0);
  Command("inject 4 xid-storm 95 2000");
  nvmlEventData_t data{};
  int events = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < milliseconds(300)) {
    if (nv.nvmlEventSetWait_v2(set, &data, 50) != 0) continue;
    ++events;
    EXPECT_EQ(data.eventData, 95ull);
    EXPECT_EQ(data.device, Device(4));
  }
  EXPECT_GT(events, 100);  // 2,000/s; the first comes once the line is applied
  Command("clear 4 xid-storm");
  // Drain what was due before the clear; then nothing more comes.
  ASSERT_TRUE(Eventually([&] { return nv.nvmlEventSetWait_v2(set, &data, 100) == 10; }));
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &data, 100), 10);
  EXPECT_EQ(nv.nvmlEventSetFree(set), 0);
}

TEST_F(SimFaultsTest, ScenarioXidFiresWhenItsTimeIsCrossed) {
  // fault-drill loses GPU 3 with XID 79 at t = 5; start just before.
  ASSERT_EQ(Start("fault-drill", {{"GPUSCOPE_SIM_START_TIME", "4.7"}}), 0);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), 0);
  for (unsigned i = 0; i < 8; ++i) ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Device(i), 0x8, set), 0);
  nvmlEventData_t data{};
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &data, 5000), 0);
  EXPECT_EQ(data.eventData, 79ull);
  EXPECT_EQ(data.device, Device(3));
  nvmlDevice_t d3 = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(3, &d3), 15);
  EXPECT_EQ(PowerCall(2), 0);
  EXPECT_EQ(nv.nvmlEventSetFree(set), 0);
}

TEST_F(SimFaultsTest, HangBlocksOnlyItsGpuAndFunction) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  nvmlDevice_t d0 = Device(0), d1 = Device(1);
  // Lines apply in order: once GPU 7 is lost, the hang is in place.
  Command("inject 0 hang nvmlDeviceGetPowerUsage 3");
  Command("inject 7 lost");
  ASSERT_TRUE(Eventually([&] { return PowerCall(7) == 15; }));
  std::atomic<bool> done{false};
  nvmlReturn_t hung_rc = -1;
  std::thread hung([&] {
    unsigned mw = 0;
    hung_rc = nv.nvmlDeviceGetPowerUsage(d0, &mw);
    done = true;
  });
  std::this_thread::sleep_for(milliseconds(100));
  for (int i = 0; i < 20; ++i) {
    unsigned mw = 0, c = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(d1, &mw), 0);     // other GPU
    EXPECT_EQ(nv.nvmlDeviceGetTemperature(d0, 0, &c), 0);  // other function
  }
  EXPECT_FALSE(done.load());  // still sleeping in the hung call
  hung.join();
  EXPECT_EQ(hung_rc, 0);
  Command("clear 0 hang");
}

TEST_F(SimFaultsTest, FailAnswersItsCodeForOneGpuAndFunctionUntilCleared) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  Command("inject 0 fail nvmlDeviceGetPowerUsage 10");  // NVML_ERROR_TIMEOUT
  ASSERT_TRUE(Eventually([&] { return PowerCall(0) == 10; }));
  unsigned c = 0;
  EXPECT_EQ(nv.nvmlDeviceGetTemperature(Device(0), 0, &c), 0);  // other function
  EXPECT_EQ(PowerCall(1), 0);                                   // other GPU
  Command("clear 0 fail");
  EXPECT_TRUE(Eventually([&] { return PowerCall(0) == 0; }));
  Command("inject 1 fail any");  // default code: NVML_ERROR_UNKNOWN
  EXPECT_TRUE(Eventually([&] { return nv.nvmlDeviceGetTemperature(Device(1), 0, &c) == 999; }));
}

TEST_F(SimFaultsTest, StatsCommandWritesCallCounts) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(PowerCall(4), 0);
  std::string out = control_ + ".stats.json";
  Command("stats " + out);
  ASSERT_TRUE(Eventually([&] { return std::ifstream(out).good(); }));
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  std::string json = text.str();
  EXPECT_NE(json.find("\"nvmlDeviceGetPowerUsage\":5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"nvmlDeviceGetHandleByIndex_v2\":5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"gpus\":[0,0,0,0,10,0,0,0]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total\":"), std::string::npos);
}

TEST_F(SimFaultsTest, UnknownCommandsAreIgnored) {
  ASSERT_EQ(StartWithControl("training-8xh100"), 0);
  Command("explode 3");
  Command("inject 99 lost");
  Command("inject 0 lost");
  ASSERT_TRUE(Eventually([&] { return PowerCall(0) == 15; }));
  EXPECT_EQ(PowerCall(3), 0);
}

TEST_F(SimFaultsTest, RunTimeFaultsDriveTheirCounters) {
  ASSERT_EQ(Start("training-8xh100",
                  {{"GPUSCOPE_SIM_CONTROL", control_}, {"GPUSCOPE_SIM_FROZEN_TIME", "10"}}),
            0);
  nvmlDevice_t d = Device(0);
  // Counters run since the driver loaded: the faults add to what is there.
  unsigned replays0 = 0;
  unsigned long long crc2_0 = 0, crc1_0 = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays0), 0);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 2, 2, &crc2_0), 0);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 1, 2, &crc1_0), 0);
  nvmlFieldValue_t replay_all0{};
  replay_all0.fieldId = 52;
  replay_all0.scopeId = 0xFFFFFFFF;
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(d, 1, &replay_all0), 0);
  for (const char* cmd :
       {"inject 0 memory-leak 1024", "inject 0 pcie-downgrade 3 8 5", "inject 0 nvlink-errors 2",
        "inject 0 nvlink-down 5", "inject 0 recovery-action drain-and-reset",
        "inject 0 power-brake", "inject 7 lost"}) {
    Command(cmd);
  }
  ASSERT_TRUE(Eventually([&] { return PowerCall(7) == 15; }));
  nv.SetTime(20);
  nvmlMemory_v2_t mem{};
  mem.version = 0x02000028;
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(d, &mem), 0);
  EXPECT_NEAR(double(mem.used) / (1ull << 30), 64 + 10, 0.2);
  unsigned gen = 0, width = 0, replays = 0, max_gen = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(d, &gen), 0);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkWidth(d, &width), 0);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(d, &max_gen), 0);
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays), 0);
  EXPECT_EQ(gen, 3u);
  EXPECT_EQ(width, 8u);
  EXPECT_EQ(max_gen, 5u);
  EXPECT_NEAR(replays - replays0, 50, 2);
  unsigned long long crc = 0;
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 2, 2, &crc), 0);
  EXPECT_NEAR(double(crc - crc2_0), 100, 3);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 1, 2, &crc), 0);
  EXPECT_EQ(crc, crc1_0);
  int active = 1;
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkState(d, 5, &active), 0);
  EXPECT_EQ(active, 0);
  EXPECT_EQ(Reasons(d) & 0x80, 0x80u);
  nvmlFieldValue_t f[2] = {};
  f[0].fieldId = 230;
  f[1].fieldId = 52;  // NVLink replay errors, all links
  f[1].scopeId = 0xFFFFFFFF;
  ASSERT_EQ(nv.nvmlDeviceGetFieldValues(d, 2, f), 0);
  EXPECT_EQ(f[0].nvmlReturn, 0);
  EXPECT_EQ(f[0].value.uiVal, 4u);
  EXPECT_NEAR(double(f[1].value.ullVal - replay_all0.value.ullVal), 20, 1);
  Command("clear 0 all");
  Command("clear 7 lost");
  ASSERT_TRUE(Eventually([&] { return PowerCall(7) == 0; }));
  nv.SetTime(21);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(d, &gen), 0);
  EXPECT_EQ(gen, 5u);
  EXPECT_EQ(Reasons(d) & 0x80, 0u);
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(d, &mem), 0);
  EXPECT_EQ(mem.used, 64ull << 30);
}

}  // namespace
}  // namespace gpuscope::sim::testing
