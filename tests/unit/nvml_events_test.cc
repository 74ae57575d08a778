// Events through the simulator: registration masks, XID delivery, timeouts.
#include <gtest/gtest.h>

#include <fstream>

#include "nvml/device.h"
#include "nvml/events.h"
#include "nvml/library.h"
#include "nvml_test_support.h"

namespace gpuscope::nvml {
namespace {

using testing::OpenSim;
using testing::ScopedEnv;
using testing::WriteTempFile;

// Waits (up to ~10 s) for the next XID event.
std::optional<Event> WaitForXid(EventSet& set) {
  for (int i = 0; i < 100; ++i) {
    auto event = set.Wait(100);
    EXPECT_TRUE(event.ok()) << event.status().message();
    if (!event.ok()) return std::nullopt;
    if (event->has_value() && (*event)->type == events::kXidCritical) return **event;
  }
  return std::nullopt;
}

TEST(NvmlEventsTest, WaitTimesOutWithoutEvents) {
  auto lib = OpenSim(WriteTempFile("quiet.yaml", "gpus:\n  - model: h100-sxm\n"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto set = EventSet::Create(**lib);
  ASSERT_TRUE(set.ok()) << set.status().message();
  auto gpu = (*lib)->DeviceByIndex(0);
  ASSERT_TRUE(gpu.ok());
  auto registered = (*set)->Register(*gpu);
  ASSERT_TRUE(registered.ok()) << registered.status().message();
  EXPECT_TRUE(*registered & events::kXidCritical);
  EXPECT_EQ(*registered & ~events::kHealth, 0u);
  auto event = (*set)->Wait(50);
  ASSERT_TRUE(event.ok()) << event.status().message();
  EXPECT_FALSE(event->has_value());
}

TEST(NvmlEventsTest, UnsupportedBitsAreMaskedBeforeRegistering) {
  auto lib = OpenSim(WriteTempFile("mask.yaml", "gpus:\n  - model: h100-sxm\n"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto set = EventSet::Create(**lib);
  ASSERT_TRUE(set.ok()) << set.status().message();
  auto gpu = (*lib)->DeviceByIndex(0);
  ASSERT_TRUE(gpu.ok());
  // Bit 62 is no event NVML knows: asking for it with XID still registers XID.
  auto registered = (*set)->Register(*gpu, events::kXidCritical | (1ull << 62));
  ASSERT_TRUE(registered.ok()) << registered.status().message();
  EXPECT_EQ(*registered, events::kXidCritical);
  auto none = (*set)->Register(*gpu, 1ull << 62);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kNotSupported);
}

TEST(NvmlEventsTest, DeliversAScenarioXidWithItsGpu) {
  auto lib = OpenSim(WriteTempFile("xid.yaml", R"(gpus:
  - model: h100-sxm
  - model: h100-sxm
    faults:
      - {kind: xid, xid: 79, at: 0.3}
)"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto set = EventSet::Create(**lib);
  ASSERT_TRUE(set.ok()) << set.status().message();
  for (unsigned i = 0; i < 2; ++i) {
    auto gpu = (*lib)->DeviceByIndex(i);
    ASSERT_TRUE(gpu.ok());
    ASSERT_TRUE((*set)->Register(*gpu).ok());
  }
  const std::optional<Event> xid = WaitForXid(**set);
  ASSERT_TRUE(xid.has_value());
  EXPECT_EQ(xid->device_index, 1u);
  EXPECT_EQ(xid->data, 79u);
  EXPECT_FALSE(xid->gpu_instance_id.has_value());
}

TEST(NvmlEventsTest, DeliversAnXidInjectedThroughTheControlFile) {
  const std::string control = WriteTempFile("nvml-events.control", "");
  ScopedEnv control_env("GPUSCOPE_SIM_CONTROL", control);
  auto lib = OpenSim("training-8xh100");
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto set = EventSet::Create(**lib);
  ASSERT_TRUE(set.ok()) << set.status().message();
  auto count = (*lib)->DeviceCount();
  ASSERT_TRUE(count.ok());
  for (unsigned i = 0; i < *count; ++i) {
    auto gpu = (*lib)->DeviceByIndex(i);
    ASSERT_TRUE(gpu.ok());
    ASSERT_TRUE((*set)->Register(*gpu).ok());
  }
  std::ofstream(control, std::ios::app) << "inject 5 xid 79\n";
  const std::optional<Event> xid = WaitForXid(**set);
  ASSERT_TRUE(xid.has_value());
  EXPECT_EQ(xid->device_index, 5u);
  EXPECT_EQ(xid->data, 79u);
}

}  // namespace
}  // namespace gpuscope::nvml
