// What a plain clone may lack: a tool scripts/setup.sh installs (promtool) or
// the reference data CI lays out beside the checkout (../shared). Without it
// a test is skipped, by name, with the reason (ctest lists it as skipped);
// under CI=true (what CI sets) it fails instead, so a skip never hides a
// broken CI machine.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_paths.h"

namespace gpuscope::test_support {

inline bool InCi() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  const std::string v = ci;
  return v == "true" || v == "1" || v == "yes";
}

// The path of a file of ../shared/reference/data beside the checkout.
inline std::string ReferenceDataPath(const std::string& name) {
  return test_support::SourceDir() + "/../shared/reference/data/" + name;
}

}  // namespace gpuscope::test_support

// Skips the current test unless `available`; fails under CI=true.
#define GPUSCOPE_NEED(available, reason)                                     \
  do {                                                                       \
    if (!(available)) {                                                      \
      if (::gpuscope::test_support::InCi()) {                                \
        FAIL() << "CI=true, so this is a failure, not a skip: " << (reason); \
      }                                                                      \
      GTEST_SKIP() << "SKIPPED: " << (reason);                               \
    }                                                                        \
  } while (0)

// Skips (fails under CI=true) unless reference data file `name` exists.
#define GPUSCOPE_NEED_REFERENCE_DATA(name)                                                 \
  GPUSCOPE_NEED(                                                                           \
      std::filesystem::is_regular_file(::gpuscope::test_support::ReferenceDataPath(name)), \
      std::string("reference data ") + ::gpuscope::test_support::ReferenceDataPath(name) + \
          " missing: ../shared/reference/data is laid out beside the checkout in CI only")
