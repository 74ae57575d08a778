// Every NVML symbol the agent uses (the X-macro) resolves in the built
// simulator, as do nvmlErrorString, the legacy aliases and the extensions.
#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

TEST(SimSymbols, EveryXMacroSymbolResolves) {
  void* h = dlopen(SimLibraryPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  int missing = 0;
#define GPUSCOPE_SIM_TEST_CHECK(name, need, params) \
  if (!dlsym(h, #name)) {                           \
    ADD_FAILURE() << "missing symbol " << #name;    \
    ++missing;                                      \
  }
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_TEST_CHECK)
#undef GPUSCOPE_SIM_TEST_CHECK
  EXPECT_EQ(missing, 0);
  for (const char* extra :
       {"nvmlErrorString", "nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
        "nvmlDeviceGetHandleByPciBusId_v2", "nvmlSystemGetCudaDriverVersion",
        "gpuscopeSimLastError", "gpuscopeSimSetTime", "gpuscopeSimGetTime"}) {
    EXPECT_NE(dlsym(h, extra), nullptr) << extra;
  }
  // Internal helpers stay hidden.
  EXPECT_EQ(dlsym(h, "_ZN8gpuscope3sim10FindPresetESt17basic_string_viewIcSt11char_traitsIcEE"),
            nullptr);
  dlclose(h);
}

TEST(SimSymbols, ErrorStringIsReadable) {
  SimLib& nv = SimLib::Get();
  ASSERT_NE(nv.nvmlErrorString, nullptr);
  EXPECT_STREQ(nv.nvmlErrorString(15), "GPU is lost");
  EXPECT_STREQ(nv.nvmlErrorString(0), "Success");
  EXPECT_STREQ(nv.nvmlErrorString(12345), "Unknown Error");
}

}  // namespace
}  // namespace gpuscope::sim::testing
