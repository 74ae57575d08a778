// Shutdown under a hung NVML call (DESIGN: SIGTERM exits within a second):
// Stop() and the destructor must not wait for the call, and the library must
// not be shut down while the call is in flight.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "collect/sampler.h"
#include "collect_test_support.h"

namespace gpuscope::collect {
namespace {

using testing::ScopedEnv;
using testing::SimControl;
using testing::SimOptions;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether the simulator's run has ended (nvmlShutdown took its refcount to
// zero): its library is unloaded, or it answers UNINITIALIZED. The weak
// pointer to the Library expires a moment before ~Library calls nvmlShutdown,
// so a sampler made in that moment would join the old run, fault and all.
bool SimRunEnded() {
  void* handle = dlopen(testing::SimLibraryPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return true;
  using Count = int (*)(unsigned*);
  auto count = reinterpret_cast<Count>(dlsym(handle, "nvmlDeviceGetCount_v2"));
  unsigned n = 0;
  const bool ended = count != nullptr && count(&n) == 1;  // NVML_ERROR_UNINITIALIZED
  dlclose(handle);
  return ended;
}

// The loop is inside its cycle's wait (fast interval 5 s) when Stop comes,
// and GPU 2's power call sleeps 6 s. Before the fix, teardown waited for the
// call to return.
TEST(CollectShutdownTest, HungCallDoesNotBlockStopOrDestruction) {
  constexpr double kHangS = 6;
  ScopedEnv scenario("GPUSCOPE_SIM_SCENARIO", "training-8xh100");
  SimControl control;
  SamplerOptions options = SimOptions();
  options.fast_interval_s = 5;
  options.slow_interval_s = 10;
  options.pcie_interval_s = 5;
  auto sampler = std::make_unique<Sampler>(options);
  ASSERT_EQ(sampler->SampleOnce(true)->samples[2].state, GpuState::kOk);
  std::weak_ptr<const nvml::Library> library = sampler->library();
  control.Send("inject 2 hang nvmlDeviceGetPowerUsage " + std::to_string(kHangS));
  sampler->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the call is in flight

  const auto stopping = std::chrono::steady_clock::now();
  sampler->Stop();
  const double stop_s = SecondsSince(stopping);
  sampler.reset();
  const double teardown_s = SecondsSince(stopping);
  // Functional bounds, far below the ~5.5 s the hung call still sleeps.
  EXPECT_LT(stop_s, 1.0);
  EXPECT_LT(teardown_s, 2.0);
  // The detached worker still co-owns the library: no nvmlShutdown under it.
  EXPECT_FALSE(library.expired());

  // Once the call returns, the worker ends and the library is released, so
  // the simulator's run ends and a new sampler starts a fresh one.
  for (int i = 0; i < 200 && !(library.expired() && SimRunEnded()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(library.expired()) << "the detached worker never released the library";
  ASSERT_TRUE(SimRunEnded()) << "the library was released but never shut down";
  Sampler again(SimOptions());
  EXPECT_EQ(again.SampleOnce(true)->samples[2].state, GpuState::kOk);
}

}  // namespace
}  // namespace gpuscope::collect
