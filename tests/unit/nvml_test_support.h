// Helpers shared by the nvml_*_test.cc files: open the simulator build of
// libnvidia-ml.so.1 with a scenario; the path, scoped environment variables
// and temp scenario files come from sim_fixture.h.
#pragma once

#include <memory>
#include <string>

#include "nvml/library.h"
#include "sim_fixture.h"

namespace gpuscope::nvml::testing {

using test_support::ScopedEnv;
using test_support::SimLibraryPath;
using test_support::WriteTempFile;

// Opens the simulator on `scenario` (a built-in name or a file path).
inline Result<std::unique_ptr<Library>> OpenSim(const std::string& scenario) {
  ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario);
  return Library::Open(SimLibraryPath());
}

}  // namespace gpuscope::nvml::testing
