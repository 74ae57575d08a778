// Helpers shared by the collect_*_test.cc files: sampler options on the
// simulator, a manual clock and the sim's scenario clock; the sim's path,
// scoped environment variables, temp files and control channel come from
// sim_fixture.h.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "collect/sampler.h"
#include "nvml/library.h"
#include "sim_fixture.h"

namespace gpuscope::collect::testing {

using test_support::ScopedEnv;
using test_support::SimControl;
using test_support::SimLibraryPath;
using test_support::TempPath;
using test_support::WriteTempFile;

// Options for a sampler on the simulator.
inline SamplerOptions SimOptions() {
  SamplerOptions options;
  options.nvml_path = SimLibraryPath();
  return options;
}

// A clock tests move by hand.
struct ManualClock {
  double now = 1'700'000'000.0;
  Clock AsClock() {
    return [this] { return now; };
  }
};

// Sets the simulator's scenario time through its exported hook.
inline void SetSimTime(const Sampler& sampler, double seconds) {
  auto library = sampler.library();
  ASSERT_NE(library, nullptr);
  ASSERT_NE(library->sim().set_time, nullptr);
  library->sim().set_time(seconds);
}

}  // namespace gpuscope::collect::testing
