#include <gtest/gtest.h>

#include "nvml/api.h"
#include "nvml/library.h"
#include "nvml_test_support.h"

namespace gpuscope::nvml {
namespace {

using testing::OpenSim;
using testing::ScopedEnv;
using testing::SimLibraryPath;
using testing::WriteTempFile;

TEST(NvmlPureTest, FormatsCudaVersion) {
  EXPECT_EQ(FormatCudaVersion(12080), "12.8");
  EXPECT_EQ(FormatCudaVersion(11040), "11.4");
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
}

TEST(NvmlPureTest, DetectsEarly535Drivers) {
  EXPECT_TRUE(IsEarly535("535.43.02"));
  EXPECT_TRUE(IsEarly535("535.54.03"));
  EXPECT_TRUE(IsEarly535("535.86.05"));
  EXPECT_FALSE(IsEarly535("535.98"));
  EXPECT_FALSE(IsEarly535("535.104.05"));
  EXPECT_FALSE(IsEarly535("550.54.15"));
  EXPECT_FALSE(IsEarly535("5350.1"));
  EXPECT_FALSE(IsEarly535(""));
}

TEST(NvmlPureTest, ReturnCodeOfReadsTheDetailThroughContext) {
  const Status lost = Status::Unavailable("nvmlX (GPU 3): GPU is lost").WithDetail(kGpuIsLost);
  EXPECT_EQ(ReturnCodeOf(lost.Context("reading GPU 3")), kGpuIsLost);
  EXPECT_TRUE(IsGpuLost(lost));
  EXPECT_FALSE(IsGpuLost(Status::Unavailable("x: y").WithDetail(kTimeout)));
  EXPECT_EQ(ReturnCodeOf(Status::NotFound("no such file")), std::nullopt);
  EXPECT_EQ(ReturnCodeOf(Status::Ok()), std::nullopt);
}

TEST(NvmlLibraryTest, MissingLibraryIsOneClearSentence) {
  auto lib = Library::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(lib.status().message(),
            "NVIDIA driver library /nonexistent/libnvidia-ml.so.1 not found (is the NVIDIA driver "
            "installed? use --nvml-lib PATH or --simulate SCENARIO)");
}

TEST(NvmlLibraryTest, NotALibraryNamesThePath) {
  const std::string path = WriteTempFile("not-a-library.so", "hello");
  auto lib = Library::Open(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("cannot load NVIDIA driver library " + path),
            std::string::npos)
      << lib.status().message();
}

TEST(NvmlLibraryTest, LibraryWithoutNvmlSymbolsNamesTheMissingOnes) {
  auto lib = Library::Open("libm.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), Status::Code::kNotSupported);
  EXPECT_NE(lib.status().message().find("lacks required symbol nvmlInit_v2, nvmlShutdown"),
            std::string::npos)
      << lib.status().message();
}

TEST(NvmlLibraryTest, OpensTheSimulatorAndReadsSystemInfo) {
  auto lib = OpenSim("training-8xh100");
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  const Library& l = **lib;
  EXPECT_EQ(l.path(), SimLibraryPath());
  EXPECT_FALSE(l.driver_version().empty());
  EXPECT_EQ(l.nvml_version(), "12." + l.driver_version());
  EXPECT_EQ(l.cuda_driver_version(), "12.8");
  EXPECT_EQ(l.process_entry_stride(), 24u);
  auto count = l.DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(*count, 8u);
}

TEST(NvmlLibraryTest, ResolvesEverySymbolOfTheTableFromTheSimulator) {
  auto lib = OpenSim("training-8xh100");
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  const Api& api = (*lib)->api();
#define EXPECT_RESOLVED(name, need, params)                       \
  EXPECT_NE(reinterpret_cast<void*>(api.name), nullptr) << #name; \
  EXPECT_TRUE((*lib)->Has(#name)) << #name;                       \
  EXPECT_EQ(reinterpret_cast<void*>(api.name), (*lib)->FindSymbol(#name)) << #name;
  GPUSCOPE_NVML_SYMBOLS(EXPECT_RESOLVED)
#undef EXPECT_RESOLVED
  EXPECT_NE(api.nvmlErrorString, nullptr);
  EXPECT_TRUE((*lib)->MissingSymbols().empty());
  EXPECT_FALSE((*lib)->Has("nvmlNoSuchFunction"));
  EXPECT_NE((*lib)->FindSymbol("gpuscopeSimLastError"), nullptr);
  // The simulator's clock, resolved at the seam for stepped sampling.
  const SimHooks& sim = (*lib)->sim();
  EXPECT_TRUE(sim.present());
  ASSERT_NE(sim.set_time, nullptr);
  ASSERT_NE(sim.get_time, nullptr);
  sim.set_time(42);
  EXPECT_DOUBLE_EQ(sim.get_time(), 42);
}

TEST(NvmlLibraryTest, ClosesAndReopens) {
  for (int i = 0; i < 3; ++i) {
    auto lib = OpenSim("training-8xh100");
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    auto count = (*lib)->DeviceCount();
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, 8u);
  }
}

TEST(NvmlLibraryTest, DriverNotLoadedIsOneSentence) {
  ScopedEnv init_error("GPUSCOPE_SIM_INIT_ERROR", "DRIVER_NOT_LOADED");
  auto lib = OpenSim("training-8xh100");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(lib.status().message().find("NVIDIA kernel driver is not loaded"), std::string::npos)
      << lib.status().message();
  EXPECT_EQ(lib.status().message().find('\n'), std::string::npos);
  // A failed init leaves nothing behind: the next open works.
  unsetenv("GPUSCOPE_SIM_INIT_ERROR");
  EXPECT_TRUE(OpenSim("training-8xh100").ok());
}

TEST(NvmlLibraryTest, MalformedScenarioMessagePassesThrough) {
  const std::string path = WriteTempFile("bad-scenario.yaml", "gpus:\n  - model: [oops\n");
  auto lib = OpenSim(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().message().rfind(path + ":", 0), 0u) << lib.status().message();
}

TEST(NvmlLibraryTest, DeviceByIndexOutOfRangeNamesTheGpu) {
  auto lib = OpenSim("training-8xh100");
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto device = (*lib)->DeviceByIndex(8);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("nvmlDeviceGetHandleByIndex_v2 (GPU 8): "),
            std::string::npos)
      << device.status().message();
  EXPECT_TRUE(ReturnCodeOf(device.status()).has_value()) << device.status().message();
}

TEST(NvmlLibraryTest, DeviceByUuidFindsTheSameGpu) {
  auto lib = OpenSim("training-8xh100");
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto gpu3 = (*lib)->DeviceByIndex(3);
  ASSERT_TRUE(gpu3.ok());
  auto uuid = gpu3->Uuid();
  ASSERT_TRUE(uuid.ok());
  auto found = (*lib)->DeviceByUuid(*uuid);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->index(), 3u);
  EXPECT_EQ(found->label(), "GPU 3");
  EXPECT_FALSE((*lib)->DeviceByUuid("GPU-00000000-0000-0000-0000-000000000000").ok());
}

}  // namespace
}  // namespace gpuscope::nvml
