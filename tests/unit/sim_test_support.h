// Test support for the simulator: loads build/<dir>/sim/libnvidia-ml.so.1
// with dlopen (as the agent does) and exposes every X-macro symbol as a typed
// function pointer, plus helpers to start a scenario with a clean environment.
//
// Thread safety: SimLib::Get() is safe to call from any thread; tests that
// init/shutdown the simulator run one at a time.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "nvml/abi.h"
#include "sim_fixture.h"

namespace gpuscope::sim::testing {

using test_support::SimLibraryPath;
using test_support::WriteTempFile;

struct SimLib {
  void* handle = nullptr;
#define GPUSCOPE_SIM_TEST_PTR(name, need, params) nvmlReturn_t(*name) params = nullptr;
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_TEST_PTR)
#undef GPUSCOPE_SIM_TEST_PTR
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  const char* (*LastError)() = nullptr;
  void (*SetTime)(double) = nullptr;
  double (*GetTime)() = nullptr;

  template <typename T>
  void Load(T*& out, const char* name) {
    out = reinterpret_cast<T*>(dlsym(handle, name));
  }

  static SimLib& Get() {
    static SimLib* lib = [] {
      auto* l = new SimLib;
      l->handle = dlopen(SimLibraryPath().c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!l->handle) return l;
#define GPUSCOPE_SIM_TEST_LOAD(name, need, params) l->Load(l->name, #name);
      GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_TEST_LOAD)
#undef GPUSCOPE_SIM_TEST_LOAD
      l->Load(l->nvmlErrorString, "nvmlErrorString");
      l->Load(l->LastError, "gpuscopeSimLastError");
      l->Load(l->SetTime, "gpuscopeSimSetTime");
      l->Load(l->GetTime, "gpuscopeSimGetTime");
      return l;
    }();
    return *lib;
  }
};

inline void ClearSimEnv() {
  for (const char* v :
       {"GPUSCOPE_SIM_SCENARIO", "GPUSCOPE_SIM_TIME_SCALE", "GPUSCOPE_SIM_START_TIME",
        "GPUSCOPE_SIM_FROZEN_TIME", "GPUSCOPE_SIM_CONTROL", "GPUSCOPE_SIM_INIT_ERROR"}) {
    unsetenv(v);
  }
}

// Fixture: each test starts from a clean environment and shuts the simulator
// down afterwards, however it ended.
class SimTest : public ::testing::Test {
 protected:
  SimLib& nv = SimLib::Get();

  void SetUp() override {
    ASSERT_NE(nv.handle, nullptr) << dlerror();
    ClearSimEnv();
  }
  void TearDown() override {
    while (nv.nvmlShutdown() == 0) {
    }
    ClearSimEnv();
  }

  // Inits with a scenario (name or path) and extra environment variables.
  nvmlReturn_t Start(const std::string& scenario,
                     const std::map<std::string, std::string>& env = {}) {
    setenv("GPUSCOPE_SIM_SCENARIO", scenario.c_str(), 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    return nv.nvmlInit_v2();
  }

  nvmlDevice_t Device(unsigned i) {
    nvmlDevice_t d = nullptr;
    nvmlReturn_t r = nv.nvmlDeviceGetHandleByIndex_v2(i, &d);
    EXPECT_TRUE(r == 0 || r == 15) << r;  // a lost GPU still yields its handle
    return d;
  }

  unsigned PowerMw(nvmlDevice_t d) {
    unsigned mw = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(d, &mw), 0);
    return mw;
  }
  unsigned Temp(nvmlDevice_t d) {
    unsigned c = 0;
    EXPECT_EQ(nv.nvmlDeviceGetTemperature(d, 0, &c), 0);
    return c;
  }
  unsigned long long Reasons(nvmlDevice_t d) {
    unsigned long long r = 0;
    EXPECT_EQ(nv.nvmlDeviceGetCurrentClocksEventReasons(d, &r), 0);
    return r;
  }
  unsigned SmClock(nvmlDevice_t d) {
    unsigned mhz = 0;
    EXPECT_EQ(nv.nvmlDeviceGetClockInfo(d, 1, &mhz), 0);
    return mhz;
  }
};

}  // namespace gpuscope::sim::testing
