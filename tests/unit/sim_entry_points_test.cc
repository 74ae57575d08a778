// The whole NVML ABI: every entry point of nvml.h (sim/nvml_entry_points.def,
// from shared/reference/nvml-functions.md) resolves in the built simulator;
// the ones it does not model answer NOT_SUPPORTED after init and
// UNINITIALIZED before; what the agent uses is modelled; and the library
// exports no nvml* name outside the table.
#include <cstdio>
#include <set>

#include "sim_test_support.h"
#include "test_need.h"

namespace gpuscope::sim::testing {
namespace {

const std::vector<std::string>& EntryPoints() {
  static const std::vector<std::string> names = {
#define X(name) #name,
#include "../../sim/nvml_entry_points.def"
#undef X
  };
  return names;
}

using StubFn = int (*)();
using UnmodelledFn = int (*)(const char*);

class SimEntryPoints : public SimTest {
 protected:
  UnmodelledFn Unmodelled() {
    return reinterpret_cast<UnmodelledFn>(dlsym(nv.handle, "gpuscopeSimUnmodelled"));
  }
};

TEST_F(SimEntryPoints, EveryListedNameResolves) {
  EXPECT_EQ(EntryPoints().size(), 412u);  // nvml-functions.md: 412 incl. unversioned names
  for (const std::string& name : EntryPoints()) {
    EXPECT_NE(dlsym(nv.handle, name.c_str()), nullptr) << "missing " << name;
  }
}

TEST_F(SimEntryPoints, WhatTheAgentUsesIsModelled) {
  UnmodelledFn unmodelled = Unmodelled();
  ASSERT_NE(unmodelled, nullptr);
#define GPUSCOPE_SIM_TEST_MODELLED(name, need, params) EXPECT_EQ(unmodelled(#name), 0) << #name;
  GPUSCOPE_NVML_SYMBOLS(GPUSCOPE_SIM_TEST_MODELLED)
#undef GPUSCOPE_SIM_TEST_MODELLED
  EXPECT_EQ(unmodelled("nvmlInit"), 0);
  EXPECT_EQ(unmodelled("gpuscopeSimGetTime"), -1);
  EXPECT_EQ(unmodelled("nvmlNoSuchFunction"), -1);
}

TEST_F(SimEntryPoints, UnmodelledOnesAnswerNotSupported) {
  UnmodelledFn unmodelled = Unmodelled();
  ASSERT_NE(unmodelled, nullptr);
  // A sample with their real arguments: features no scenario models.
  using DeviceUint = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
  for (const char* name : {"nvmlDeviceGetBoardId", "nvmlDeviceGetMultiGpuBoard",
                           "nvmlDeviceGetEncoderCapacity", "nvmlDeviceGetNumGpuCores"}) {
    EXPECT_EQ(unmodelled(name), 1) << name;
  }
  auto uint_getter = [&](const char* name) {
    return reinterpret_cast<DeviceUint>(dlsym(nv.handle, name));
  };
  EXPECT_EQ(uint_getter("nvmlDeviceGetBoardId")(nullptr, nullptr), 1);  // before init
  ASSERT_EQ(Start("training-8xh100"), 0);
  nvmlDevice_t d = Device(0);
  unsigned value = 12345;
  EXPECT_EQ(uint_getter("nvmlDeviceGetBoardId")(d, &value), 3);
  EXPECT_EQ(uint_getter("nvmlDeviceGetMultiGpuBoard")(d, &value), 3);
  EXPECT_EQ(uint_getter("nvmlDeviceGetNumGpuCores")(d, &value), 3);
  EXPECT_EQ(value, 12345u);  // nothing written
  using UnitCount = nvmlReturn_t (*)(unsigned int*);
  auto unit_count = reinterpret_cast<UnitCount>(dlsym(nv.handle, "nvmlUnitGetCount"));
  ASSERT_NE(unit_count, nullptr);
  EXPECT_EQ(unit_count(&value), 3);
  // Every stub answers the same; count them (the docs quote the split).
  int stubs = 0;
  for (const std::string& name : EntryPoints()) {
    if (unmodelled(name.c_str()) != 1) continue;
    ++stubs;
    auto fn = reinterpret_cast<StubFn>(dlsym(nv.handle, name.c_str()));
    EXPECT_EQ(fn(), 3) << name;
  }
  EXPECT_GT(stubs, 250);
  EXPECT_LT(stubs, 412);
  std::printf("entry points: %zu, unmodelled: %d\n", EntryPoints().size(), stubs);
}

TEST_F(SimEntryPoints, ExportsNoNvmlNameOutsideTheTable) {
  FILE* nm = popen(("nm -D --defined-only " + SimLibraryPath() + " 2>/dev/null").c_str(), "r");
  std::set<std::string> exported;
  char line[512];
  while (nm && std::fgets(line, sizeof line, nm)) {
    char name[400];
    if (std::sscanf(line, "%*s %*s %399s", name) == 1) exported.insert(name);
  }
  if (nm) pclose(nm);
  GPUSCOPE_NEED(!exported.empty(), "nm (binutils) lists the simulator's dynamic symbols");
  std::set<std::string> table(EntryPoints().begin(), EntryPoints().end());
  table.insert("nvmlErrorString");  // returns a string, not nvmlReturn_t: not in the list
  for (const std::string& name : exported) {
    if (name.rfind("nvml", 0) != 0) continue;
    EXPECT_TRUE(table.count(name)) << "exported, not listed: " << name;
  }
  for (const std::string& name : table)
    EXPECT_TRUE(exported.count(name)) << "not exported: " << name;
}

}  // namespace
}  // namespace gpuscope::sim::testing
